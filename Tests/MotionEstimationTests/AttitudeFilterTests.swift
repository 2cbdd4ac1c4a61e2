import Foundation
import MotionModel
import Testing

@testable import MotionEstimation

@Suite struct AttitudeFilterTests {
    /// Feeds a synthetic sample to the filter in its own conventions (specific force, m/s²).
    static func feed(_ f: inout AttitudeFilter, _ s: IMUSample) -> AttitudeFilter.Update {
        f.update(
            timestamp: s.timestamp,
            gyroscope: s.rotationRate!,
            specificForce: s.acceleration! * -standardGravity,
            magneticField: s.magneticField
        )
    }

    @Test func gyroscopeBiasConvergesAtRest() {
        var sim = AttitudeSynthesizer(attitude: Quaternion(roll: 0.3, pitch: -0.2, yaw: 1), rateHz: 100)
        sim.gyroscopeBias = Vector3(0.01, -0.02, 0.005)  // rad/s: 0.57, −1.15, 0.29 °/s
        sim.noise = 0.2
        var f = AttitudeFilter(sampleInterval: 0.01)
        for _ in 0..<3000 { _ = Self.feed(&f, sim.step(rate: .zero)) }
        #expect(f.isAtRest)
        #expect((f.gyroscopeBias - sim.gyroscopeBias).norm < 5e-4)
        #expect(f.gyroscopeBiasSigma < 1e-3)
        // Level and still: the 6D attitude's inclination matches the truth.
        let g = f.quaternion6D.inverseRotate(Vector3(0, 0, 1))
        let truth = sim.attitude.inverseRotate(Vector3(0, 0, 1))
        #expect(degrees(acos(min(1, g.dot(truth)))) < 0.2)
    }

    @Test func nineAxisAttitudeFollowsARotation() {
        var sim = AttitudeSynthesizer(attitude: Quaternion(roll: 0.2, pitch: 0.1, yaw: 0.8), rateHz: 200)
        var f = AttitudeFilter(sampleInterval: 0.005)
        for i in 0..<4000 {
            let rate = Vector3(0.3 * sin(Double(i) / 300), 0.2 * cos(Double(i) / 250), 0.6)
            _ = Self.feed(&f, sim.step(rate: rate))
        }
        // Filter ENU → NWU, then compare with the truth.
        let nwu = Quaternion.aboutZ(-.pi / 2) * f.quaternion9D
        #expect(degrees(nwu.angle(to: sim.attitude)) < 1)
    }

    @Test func magneticDisturbanceIsRejected() {
        func run(rejection: Bool) -> (error: Double, detected: Bool) {
            var p = AttitudeFilterParameters()
            p.magneticDisturbanceRejection = rejection
            var sim = AttitudeSynthesizer(rateHz: 100)
            var f = AttitudeFilter(sampleInterval: 0.01, parameters: p)
            var detected = false
            for i in 0..<3000 {
                let t = Double(i) / 100
                // Turning at 30 °/s; from 15 s to 25 s a magnet 25 µT strong sits east of the device.
                let magnet = t >= 15 && t < 25 ? Vector3(0, -25, 10) : .zero
                _ = Self.feed(&f, sim.step(rate: Vector3(0, 0, 0.52), field: sim.earthField + magnet))
                if t > 16 && t < 25 { detected = detected || f.isMagneticDisturbanceDetected }
                if i == 2499 {
                    let nwu = Quaternion.aboutZ(-.pi / 2) * f.quaternion9D
                    return (degrees(nwu.angle(to: sim.attitude)), detected)
                }
            }
            return (.infinity, detected)
        }
        let with = run(rejection: true)
        let without = run(rejection: false)
        #expect(with.detected)
        #expect(with.error < 1)
        #expect(without.error > 5)
    }

    @Test func badInputIsRejectedWithoutCorruptingTheState() {
        var sim = AttitudeSynthesizer(attitude: Quaternion(roll: 0.4, pitch: 0.1, yaw: -1), rateHz: 100)
        var f = AttitudeFilter(sampleInterval: 0.01)
        for _ in 0..<500 { _ = Self.feed(&f, sim.step(rate: Vector3(0.1, 0, 0.2))) }
        let before = f.quaternion9D
        let bias = f.gyroscopeBias
        let t = sim.time
        let nan = Vector3(.nan, 0, 0)
        #expect(
            f.update(timestamp: t + 0.01, gyroscope: nan, specificForce: Vector3(0, 0, 9.8), magneticField: nil) == []
        )
        #expect(f.update(timestamp: .nan, gyroscope: .zero, specificForce: nil, magneticField: nil) == [])
        #expect(f.update(timestamp: t, gyroscope: Vector3(1, 1, 1), specificForce: nil, magneticField: nil) == [])
        #expect(f.update(timestamp: t - 1, gyroscope: Vector3(1, 1, 1), specificForce: nil, magneticField: nil) == [])
        #expect(f.quaternion9D == before && f.gyroscopeBias == bias)

        // The clock resynchronised at t − 1: the next sample is accepted; bad acc and mag are skipped.
        let used = f.update(timestamp: t - 0.99, gyroscope: .zero, specificForce: nan, magneticField: .zero)
        #expect(used == [.gyroscope])
        #expect(
            f.update(timestamp: t - 0.98, gyroscope: .zero, specificForce: .zero, magneticField: nan) == [.gyroscope]
        )
        #expect(
            f.update(timestamp: t - 0.97, gyroscope: .zero, specificForce: Vector3(1e5, 0, 0), magneticField: nil)
                == [.gyroscope]
        )
        // Only the (tiny) bias estimate was integrated over those 30 ms.
        #expect(f.quaternion9D.angle(to: before) < 1e-4)

        // A huge gap is not integrated.
        let beforeGap = f.quaternion9D
        let gap = f.update(timestamp: t + 1000, gyroscope: Vector3(5, 5, 5), specificForce: nil, magneticField: nil)
        #expect(gap.contains(.gap))
        #expect(f.quaternion9D.angle(to: beforeGap) < 1e-12)
        #expect(f.quaternion9D.isFinite && f.gyroscopeBias.isFinite && f.headingCorrection.isFinite)

        // And the filter carries on correctly after it.
        sim.time = t + 1000
        for _ in 0..<1500 { _ = Self.feed(&f, sim.step(rate: Vector3(0.1, 0, 0.2))) }
        let nwu = Quaternion.aboutZ(-.pi / 2) * f.quaternion9D
        #expect(degrees(nwu.angle(to: sim.attitude)) < 1)
    }

    /// Seeded with 100 Hz but fed 250 Hz: the filter measures the interval and retunes its low-passes.
    @Test func adaptsToTheMeasuredRate() {
        var sim = AttitudeSynthesizer(attitude: Quaternion(roll: 0.2, pitch: 0.1, yaw: 0.5), rateHz: 250)
        var f = AttitudeFilter(sampleInterval: 0.01)
        for _ in 0..<5000 { _ = Self.feed(&f, sim.step(rate: Vector3(0.1, -0.2, 0.3))) }
        #expect(abs(f.coefficients.acc.interval - 0.004) < 0.0003)
        #expect(abs(f.coefficients.kMag - AttitudeFilter.gainFromTau(9, 0.004)) < 1e-5)
        let nwu = Quaternion.aboutZ(-.pi / 2) * f.quaternion9D
        #expect(degrees(nwu.angle(to: sim.attitude)) < 1)
    }

    @Test func persistentStateRoundTrips() throws {
        var sim = AttitudeSynthesizer(rateHz: 100)
        sim.gyroscopeBias = Vector3(0.01, 0.004, -0.008)
        var f = AttitudeFilter(sampleInterval: 0.01)
        for _ in 0..<2000 { _ = Self.feed(&f, sim.step(rate: .zero)) }
        let data = try JSONEncoder().encode(f.persistentState)
        let state = try JSONDecoder().decode(AttitudeFilterState.self, from: data)
        var g = AttitudeFilter(sampleInterval: 0.01)
        g.restore(state)
        #expect(g.gyroscopeBias == f.gyroscopeBias)
        #expect(abs(g.gyroscopeBiasSigma - f.gyroscopeBiasSigma) < 1e-9)
        #expect(g.magneticReference == f.magneticReference)
    }
}
