import MotionEstimation
import MotionModel
import Testing

/// The direction of the uncertainty model (not its calibration, which BENCHMARKS.md reports as not met).
@Suite("Attitude uncertainty")
struct AttitudeUncertaintyTests {
    static let p = AttitudeFilterParameters.default

    static func steady(_ u: inout AttitudeUncertainty, seconds: Double, user: Vector3, magnetic: Double?) {
        for _ in 0..<Int(seconds * 100) {
            u.update(
                dt: 0.01,
                rotationRate: Vector3(0, 0, 0.2),
                userAcceleration: user,
                biasSigma: 0.002,
                parameters: p,
                magneticReference: magnetic
            )
        }
    }

    @Test("heading σ shrinks with good magnetic updates and grows while the magnetometer is not used")
    func heading() {
        var u = AttitudeUncertainty()
        Self.steady(&u, seconds: 120, user: .zero, magnetic: 1 * .pi / 180)
        let steered = u.headingDegrees
        #expect(steered < 5, "\(steered)°")
        Self.steady(&u, seconds: 60, user: .zero, magnetic: nil)
        #expect(u.headingDegrees > steered + 3, "\(u.headingDegrees)° after 60 s without the magnetometer")
        Self.steady(&u, seconds: 120, user: .zero, magnetic: 1 * .pi / 180)
        #expect(u.headingDegrees < 5)
    }

    @Test("inclination σ grows during sustained acceleration and settles back at rest")
    func inclination() {
        var u = AttitudeUncertainty()
        Self.steady(&u, seconds: 30, user: .zero, magnetic: nil)
        let still = u.inclinationDegrees
        Self.steady(&u, seconds: 10, user: Vector3(0.3, 0, 0), magnetic: nil)
        #expect(u.inclinationDegrees > still + 5, "\(still)° → \(u.inclinationDegrees)° under 0.3 g")
        Self.steady(&u, seconds: 30, user: .zero, magnetic: nil)
        #expect(u.inclinationDegrees < still + 1)
    }
}
