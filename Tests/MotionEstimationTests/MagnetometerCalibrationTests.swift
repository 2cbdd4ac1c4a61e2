import Foundation
import MotionModel
import Testing

@testable import MotionEstimation

@Suite struct MagnetometerCalibrationTests {
    /// Raw samples `S · R⁻¹ B + b` over many orientations, deterministic.
    static func samples(hardIron: Vector3, softIron: Matrix3x3, count: Int, noise: Double) -> [Vector3] {
        var sim = AttitudeSynthesizer(rateHz: 20)
        sim.noise = noise
        var out: [Vector3] = []
        for i in 0..<count {
            let t = Double(i)
            let rate = Vector3(1.1 * sin(t / 37), 0.9 * cos(t / 23), 0.7 * sin(t / 51 + 1))
            let s = sim.step(rate: rate)
            out.append(softIron * s.magneticField! + hardIron)
        }
        return out
    }

    @Test func recoversHardAndSoftIron() {
        let hard = Vector3(32, -18, 45)
        // Symmetric, eigenvalues about 0.85…1.2.
        let soft = Matrix3x3(
            r0: Vector3(1.15, 0.06, -0.04),
            r1: Vector3(0.06, 0.92, 0.05),
            r2: Vector3(-0.04, 0.05, 1.02)
        )
        var c = MagnetometerCalibrator()
        for (i, m) in Self.samples(hardIron: hard, softIron: soft, count: 6000, noise: 0.05).enumerated() {
            c.update(m, timestamp: Double(i) * 0.05)
        }
        #expect((c.hardIron - hard).norm < 0.3)
        // W · S is a multiple of the identity.
        let w = Matrix3x3(r0: c.softIron.r0, r1: c.softIron.r1, r2: c.softIron.r2)
        let p = w * soft
        let k = cbrt(p.determinant)
        let e = (1 / k) * p - .identity
        #expect(e.maxAbsoluteRowSum < 0.01)
        #expect(c.accuracy == .high)
        #expect(c.relativeResidual < 0.01)
    }

    @Test func keepsAGoodCalibrationAndStartsUncalibrated() {
        var c = MagnetometerCalibrator()
        #expect(c.accuracy == .uncalibrated)
        // Already calibrated data: the identity explains it, nothing is fitted into the noise.
        for (i, m) in Self.samples(hardIron: .zero, softIron: .identity, count: 3000, noise: 0.5).enumerated() {
            c.update(m, timestamp: Double(i) * 0.05)
        }
        #expect(c.hardIron == .zero)
        #expect(c.accuracy >= .medium)
    }

    @Test func followsAMagnetAttachedToTheDevice() {
        var c = MagnetometerCalibrator()
        let before = Self.samples(hardIron: .zero, softIron: .identity, count: 2000, noise: 0.2)
        let after = Self.samples(hardIron: Vector3(-7, -1, 58), softIron: .identity, count: 2000, noise: 0.2)
        for (i, m) in (before + after).enumerated() { c.update(m, timestamp: Double(i) * 0.05) }
        #expect((c.hardIron - Vector3(-7, -1, 58)).norm < 1)
        #expect(c.isConsistent)
        // Taken off again: back to the calibration from before.
        for (i, m) in before.prefix(400).enumerated() { c.update(m, timestamp: 200 + Double(i) * 0.05) }
        #expect(c.hardIron.norm < 1)
        #expect(c.isConsistent)
    }
}
