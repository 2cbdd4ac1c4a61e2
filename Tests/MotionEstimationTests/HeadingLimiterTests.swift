import MotionEstimation
import MotionModel
import Testing

/// The heading-usability policy: the World Magnetic Model's expectation when there is one, else the measured
/// horizontal field.
@Suite struct HeadingLimiterTests {
    private func motion(horizontalMicrotesla: Double) -> DeviceMotion {
        DeviceMotion(
            timestamp: 0,
            attitude: .identity,
            rotationRate: .zero,
            gravity: Vector3(0, 0, -1),
            userAcceleration: .zero,
            magneticField: Vector3(horizontalMicrotesla, 0, -40),
            magneticFieldAccuracy: .high,
            heading: 42,
            referenceFrame: .xMagneticNorthZVertical
        )
    }

    @Test func withoutAnExpectationTheMeasuredFieldDecides() {
        var limiter = HeadingLimiter()
        var m = motion(horizontalMicrotesla: 20)
        limiter.limit(&m)
        #expect(m.heading == 42 && m.magneticFieldAccuracy == .high, "nothing measured yet: normal")
        limiter.observe(motion(horizontalMicrotesla: 4), rateHz: 100)
        #expect(abs(limiter.measuredHorizontalNanotesla - 4000) < 1e-6)
        limiter.limit(&m)
        #expect(m.heading == 42 && m.magneticFieldAccuracy == .low, "4000 nT: degraded")
        for _ in 0..<2000 { limiter.observe(motion(horizontalMicrotesla: 1), rateHz: 100) }
        limiter.limit(&m)
        #expect(m.heading == -1 && m.magneticFieldAccuracy == .uncalibrated, "about 1000 nT: unusable")
    }

    @Test func theModelsExpectationWinsOverTheMeasurement() {
        var limiter = HeadingLimiter(expected: .normal)
        for _ in 0..<200 { limiter.observe(motion(horizontalMicrotesla: 1), rateHz: 100) }
        var m = motion(horizontalMicrotesla: 1)
        limiter.limit(&m)
        #expect(m.heading == 42 && m.magneticFieldAccuracy == .high)
        limiter.expected = .unusable
        limiter.limit(&m)
        #expect(m.heading == -1)
    }
}
