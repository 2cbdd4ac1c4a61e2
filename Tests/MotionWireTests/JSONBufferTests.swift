import AgentPorts
import Foundation
import MotionModel
import MotionWire
import Testing

@Suite struct JSONBufferTests {
    private func text(_ build: (inout JSONBuffer) -> Void) -> String {
        var b = JSONBuffer()
        build(&b)
        return b.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test(arguments: [
        (0.0, 6, "0"), (-0.0, 6, "0"), (1.0, 6, "1"), (-1.0, 6, "-1"), (0.05, 3, "0.05"),
        (-0.981234567, 6, "-0.981235"), (12.5, 2, "12.5"), (0.000001, 6, "0.000001"), (0.0000004, 6, "0"),
        (1763700000.123456, 6, "1763700000.123456"), (Double.nan, 6, "null"), (Double.infinity, 3, "null"),
    ])
    func numbers(value: Double, decimals: Int, expected: String) {
        #expect(text { $0.number(value, decimals: decimals) } == expected)
    }

    @Test func integersAndStrings() {
        #expect(text { $0.integer(-42) } == "-42")
        #expect(text { $0.integer(Int.min) } == "-9223372036854775808")
        #expect(text { $0.unsigned(UInt64.max) } == "18446744073709551615")
        #expect(text { $0.string("a\"b\\c\n\u{1}") } == #""a\"b\\c\n\u0001""#)
    }

    @Test func vectorIsValidJSONThatRoundTrips() throws {
        let s = text { $0.vector(Vector3(0.1, -0.25, -1), decimals: 6) }
        let parsed = try JSONSerialization.jsonObject(with: Data(s.utf8)) as? [String: Double]
        #expect(parsed == ["x": 0.1, "y": -0.25, "z": -1])
    }
}
