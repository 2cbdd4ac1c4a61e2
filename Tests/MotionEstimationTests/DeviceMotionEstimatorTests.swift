import Foundation
import MotionModel
import Testing

@testable import MotionEstimation

@Suite struct DeviceMotionEstimatorTests {
    static let start = Quaternion(roll: 0.2, pitch: -0.3, yaw: 0.9)

    /// Runs a turn-and-tilt motion and returns the last output with the true attitude (device → NWU).
    static func run(
        _ frame: AttitudeReferenceFrame,
        declination: Double = 0,
        seconds: Double = 30,
        first: ((DeviceMotion) -> Void)? = nil
    ) -> (DeviceMotion, Quaternion) {
        var sim = AttitudeSynthesizer(attitude: start, rateHz: 100)
        var e = DeviceMotionEstimator(referenceFrame: frame, sampleInterval: 0.01, declinationDegrees: declination)
        var last: DeviceMotion?
        for i in 0..<Int(seconds * 100) {
            let rate = Vector3(0.2 * sin(Double(i) / 200), 0.15 * cos(Double(i) / 170), 0.4)
            guard let m = e.update(sim.step(rate: rate)) else { continue }
            if last == nil { first?(m) }
            last = m
        }
        return (last!, sim.attitude)
    }

    @Test func magneticNorthIsNorthWestUp() {
        let (m, truth) = Self.run(.xMagneticNorthZVertical)
        #expect(degrees(m.attitude.angle(to: truth)) < 1)
        // Compass heading of the device's +y axis, clockwise from north.
        let y = truth.rotate(Vector3(0, 1, 0))
        var expected = -atan2(y.y, y.x) * 180 / .pi
        if expected < 0 { expected += 360 }
        var diff = abs(m.heading - expected)
        diff = min(diff, 360 - diff)
        #expect(diff < 1)
        #expect(m.heading >= 0 && m.heading < 360)
        #expect(m.referenceFrame == .xMagneticNorthZVertical)
    }

    @Test func trueNorthTurnsByTheDeclination() {
        let (m, truth) = Self.run(.xTrueNorthZVertical, declination: 12)
        #expect(degrees(m.attitude.angle(to: Quaternion.aboutZ(-12 * .pi / 180) * truth)) < 1)
    }

    @Test(arguments: [AttitudeReferenceFrame.xArbitraryZVertical, .xArbitraryCorrectedZVertical])
    func arbitraryFramesStartAtYawZero(_ frame: AttitudeReferenceFrame) {
        var firstYaw = Double.nan
        let (m, truth) = Self.run(frame, seconds: 20) { firstYaw = $0.yaw }
        #expect(abs(firstYaw) < 0.01)
        #expect(m.heading == -1)
        // The frame is NWU turned by the start's yaw.
        let expected = Quaternion.aboutZ(-Self.start.yaw) * truth
        #expect(degrees(m.attitude.angle(to: expected)) < 1.5)
    }

    @Test func frameSwitchesAtRunTime() {
        var sim = AttitudeSynthesizer(attitude: Self.start, rateHz: 100)
        var e = DeviceMotionEstimator(referenceFrame: .xMagneticNorthZVertical, sampleInterval: 0.01)
        for _ in 0..<1000 { _ = e.update(sim.step(rate: Vector3(0, 0, 0.3))) }
        e.referenceFrame = .xArbitraryZVertical
        let m = e.update(sim.step(rate: Vector3(0, 0, 0.3)))!
        #expect(abs(m.yaw) < 0.01 && m.referenceFrame == .xArbitraryZVertical && m.heading == -1)
        e.referenceFrame = .xMagneticNorthZVertical
        let n = e.update(sim.step(rate: Vector3(0, 0, 0.3)))!
        #expect(degrees(n.attitude.angle(to: sim.attitude)) < 1)
    }

    @Test func gravityAndUserAccelerationDecomposeTheAccelerometer() {
        var sim = AttitudeSynthesizer(attitude: Quaternion(roll: 0.5, pitch: 0.3, yaw: 0), rateHz: 100)
        var e = DeviceMotionEstimator(sampleInterval: 0.01)
        var m: DeviceMotion?
        for _ in 0..<500 { m = e.update(sim.step(rate: .zero)) }
        let truth = sim.attitude.inverseRotate(Vector3(0, 0, -1))
        #expect((m!.gravity - truth).norm < 0.002)
        #expect(m!.userAcceleration.norm < 0.002)
        // A push along device x: user acceleration shows it, gravity does not move.
        let s = sim.step(rate: .zero, userAcceleration: Vector3(0.3, 0, 0))
        let p = e.update(s)!
        #expect((p.gravity - truth).norm < 0.002)
        #expect((p.userAcceleration - Vector3(0.3, 0, 0)).norm < 0.002)
        #expect((p.gravity + p.userAcceleration - s.acceleration!).norm < 1e-12)

        // Face up, still: gravity is (0, 0, −1).
        var flat = AttitudeSynthesizer(rateHz: 100)
        var f = DeviceMotionEstimator(sampleInterval: 0.01)
        var q: DeviceMotion?
        for _ in 0..<300 { q = f.update(flat.step(rate: .zero)) }
        #expect((q!.gravity - Vector3(0, 0, -1)).norm < 1e-3)
    }

    @Test func rotationRateHasTheBiasRemoved() {
        var sim = AttitudeSynthesizer(rateHz: 100)
        sim.gyroscopeBias = Vector3(0.01, -0.01, 0.02)
        var e = DeviceMotionEstimator(sampleInterval: 0.01)
        var m: DeviceMotion?
        for _ in 0..<3000 { m = e.update(sim.step(rate: .zero)) }
        #expect(m!.rotationRate.norm < 1e-3)
    }

    @Test func samplesWithoutGyroscopeGiveNoOutputButAreUsed() {
        var e = DeviceMotionEstimator(sampleInterval: 0.01)
        #expect(e.update(IMUSample(timestamp: 0, acceleration: Vector3(0, 0, -1))) == nil)
        let m = e.update(IMUSample(timestamp: 0.01, rotationRate: .zero))
        #expect(m != nil && (m!.userAcceleration - (Vector3(0, 0, -1) - m!.gravity)).norm < 1e-12)
    }

    @Test func stateSurvivesEncoding() throws {
        var sim = AttitudeSynthesizer(rateHz: 100)
        sim.gyroscopeBias = Vector3(0.01, 0, 0)
        var e = DeviceMotionEstimator(sampleInterval: 0.01)
        for _ in 0..<2000 { _ = e.update(sim.step(rate: .zero)) }
        let data = try JSONEncoder().encode(e.persistentState)
        var r = DeviceMotionEstimator(sampleInterval: 0.01)
        r.restore(try JSONDecoder().decode(DeviceMotionEstimatorState.self, from: data))
        #expect(r.filter.gyroscopeBias == e.filter.gyroscopeBias)
        #expect(r.calibrator.hardIron == e.calibrator.hardIron)
    }
}
