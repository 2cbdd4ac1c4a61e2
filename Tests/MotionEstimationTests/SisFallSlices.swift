import MotionModel
import TestSupport

/// SisFall trials committed under Tests/Fixtures/data/falls/sisfall (its README: source, licence, what was cut), in
/// the agent's units: the ADXL345's raw counts × 32 / 8192 g, negated (specific force → Core Motion's sign), the
/// ITG3200's × 4000 / 65536 °/s in rad/s; sample n at n / 200 s.
enum SisFallSlices {
    static let rateHz = 200.0

    static func samples(_ name: String) throws -> [IMUSample] {
        let text = try DataFixtures.text("falls/sisfall/\(name).csv")
        var out: [IMUSample] = []
        for (n, line) in text.split(whereSeparator: \.isNewline).dropFirst().enumerated() {
            let v = line.split(separator: ",").compactMap { Double($0) }
            guard v.count >= 6 else { throw SliceError(description: "\(name).csv row \(n + 2): \(v.count) numbers") }
            let g = 32.0 / 8192.0
            let r = 4000.0 / 65536.0 * Double.pi / 180
            out.append(
                IMUSample(
                    timestamp: Double(n) / rateHz,
                    acceleration: Vector3(-v[0] * g, -v[1] * g, -v[2] * g),
                    rotationRate: Vector3(v[3] * r, v[4] * r, v[5] * r)
                )
            )
        }
        return out
    }

    /// Every `step`-th sample from the first (the agent's decimator picks samples so), without the rotation rate
    /// when `gyroscope` is false.
    static func thinned(_ samples: [IMUSample], step: Int, gyroscope: Bool) -> [IMUSample] {
        stride(from: 0, to: samples.count, by: step).map { i in
            var s = samples[i]
            if !gyroscope { s.rotationRate = nil }
            return s
        }
    }

    struct SliceError: Error, CustomStringConvertible {
        var description: String
    }
}
