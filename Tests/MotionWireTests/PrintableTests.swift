import Foundation
import MotionWire
import Testing

/// Device text on the operator's terminal: `Printable.text` for lines, `Printable.json` for JSON output.
@Suite struct PrintableTests {
    static let hostile = "a\u{1B}]0;owned\u{07}\u{1B}[2J\u{9B}1m\u{7F}\u{2028}\u{202E}\u{2066}\r\nz"

    static func actedOn(_ text: String) -> [UInt32] {
        text.unicodeScalars.map(\.value).filter {
            $0 < 0x20 || (0x7F...0x9F).contains($0) || (0x2028...0x202E).contains($0) || (0x2066...0x2069).contains($0)
        }
    }

    @Test func textWritesEveryControlCharacterAsAnEscape() {
        let shown = Printable.text(Self.hostile, limit: 200)
        #expect(Self.actedOn(shown).isEmpty, "\(shown.unicodeScalars.map(\.value))")
        #expect(shown.hasPrefix("a\\u{1B}]0;owned\\u{7}") && shown.hasSuffix("\\u{D}\\u{A}z"), "\(shown)")
    }

    @Test func jsonEscapesWhatTheEncoderLeavesRawAndKeepsTheValue() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let raw = String(decoding: try encoder.encode(["key\u{9B}": Self.hostile]), as: UTF8.self)
        // The encoder leaves C1, DEL and the separators raw: the case Printable.json is for.
        #expect(raw.unicodeScalars.contains("\u{9B}"))
        let shown = Printable.json(raw)
        #expect(Self.actedOn(shown).isEmpty, "\(shown)")
        let decoded = try JSONSerialization.jsonObject(with: Data(shown.utf8)) as? [String: String]
        #expect(decoded == ["key\u{9B}": Self.hostile])
    }
}
