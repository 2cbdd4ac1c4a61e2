import MotionEstimation
import MotionModel
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Impact, free fall and tilt on synthetic signals, whose answers are known exactly.
@Suite("Motion events")
struct MotionEventTests {
    static let rate = 100.0

    /// `seconds` of samples at rest face up (Core Motion: (0, 0, −1) g) from `start`, with `shape(t)` replacing the
    /// acceleration where it returns a value.
    static func signal(
        seconds: Double,
        start: Double = 0,
        _ shape: (Double) -> Vector3? = { _ in nil }
    ) -> [IMUSample] {
        (0..<Int(seconds * rate)).map { n in
            let t = start + Double(n) / rate
            return IMUSample(timestamp: t, acceleration: shape(t) ?? Vector3(0, 0, -1), rotationRate: .zero)
        }
    }

    static func events(_ samples: [IMUSample], _ settings: MotionEventDetector.Settings = .defaults) -> [MotionEvent] {
        var d = MotionEventDetector(settings: settings)
        return samples.flatMap { Array(d.update($0)) }
    }

    @Test("an impact: its start, peak and duration; a spike below the threshold is none")
    func impact() throws {
        // 1.00–1.03 s at 5 g then 6 g then 4 g, along x
        let spike = Self.signal(seconds: 3) { t in
            switch t {
            case 1.0..<1.005: Vector3(5, 0, -1)
            case 1.005..<1.015: Vector3(6, 0, -1)
            case 1.015..<1.025: Vector3(4, 0, -1)
            default: nil
            }
        }
        let impacts = Self.events(spike).compactMap { e -> ImpactEvent? in if case .impact(let i) = e { i } else { nil }
        }
        try #require(impacts.count == 1)
        #expect(abs(impacts[0].date - 1.0) < 1e-9)
        #expect(abs(impacts[0].peakAcceleration - Vector3(6, 0, -1).norm) < 1e-12)
        #expect(abs(impacts[0].duration - 0.03) < 1e-9, "first sample above at 1.00 s, first below at 1.03 s")
        let small = Self.signal(seconds: 3) { t in (1.0..<1.02).contains(t) ? Vector3(2.5, 0, -1) : nil }
        #expect(!Self.events(small).contains { $0.kind == .impact })
    }

    @Test("rebounds closer than the merge gap are one impact")
    func reboundsMerge() {
        let bounces = Self.signal(seconds: 3) { t in
            (1.0..<1.01).contains(t) || (1.05..<1.06).contains(t) ? Vector3(0, 4, -1) : nil
        }
        let impacts = Self.events(bounces).filter { $0.kind == .impact }
        #expect(impacts.count == 1)
    }

    @Test("a free fall of 0.3 s: its start, duration and height ½ g t²; a 0.1 s dip is none")
    func freeFall() throws {
        let drop = Self.signal(seconds: 3) { t in (1.0..<1.3).contains(t) ? Vector3(0.02, 0.01, -0.05) : nil }
        let falls = Self.events(drop).compactMap { e -> FreeFallEvent? in
            if case .freeFall(let f) = e { f } else { nil }
        }
        try #require(falls.count == 1)
        #expect(abs(falls[0].date - 1.0) < 1e-9)
        #expect(abs(falls[0].duration - 0.3) < 1e-9)
        #expect(abs(falls[0].height - 0.5 * standardGravity * 0.09) < 1e-9)
        let dip = Self.signal(seconds: 3) { t in (1.0..<1.1).contains(t) ? Vector3(0, 0, -0.1) : nil }
        #expect(!Self.events(dip).contains { $0.kind == .freeFall })
    }

    /// Face up, then turning about x to `angle(t)` degrees: gravity (0, −sin, −cos), and the matching rotation rate.
    static func tilting(seconds: Double, angle: (Double) -> Double, gyroscope: Bool) -> [IMUSample] {
        (0..<Int(seconds * rate)).map { n in
            let t = Double(n) / rate
            let a = angle(t) * Double.pi / 180
            let rate = (angle(t + 1e-4) - angle(t - 1e-4)) / 2e-4 * Double.pi / 180
            return IMUSample(
                timestamp: t,
                acceleration: Vector3(0, -sin(a), -cos(a)),
                rotationRate: gyroscope ? Vector3(rate, 0, 0) : nil
            )
        }
    }

    @Test("tilt: leaving the 30° cone and coming back below 25°, not flickering at its edge", arguments: [true, false])
    func tilt(gyroscope: Bool) throws {
        var settings = MotionEventDetector.Settings.defaults
        settings.tiltEnabled = true
        // At rest 2 s (the reference), to 45° over 1 s, held, back to 28° (inside the hysteresis band: still
        // tilted), wobbling 28–33°, then to 20°.
        let angle: (Double) -> Double = { t in
            switch t {
            case ..<2: 0
            case 2..<3: 45 * (t - 2)
            case 3..<5: 45
            case 5..<6: 45 - 17 * (t - 5)
            case 6..<9: 30.5 + 2.5 * sin(2 * Double.pi * (t - 6))
            case 9..<10: 30.5 - 10.5 * (t - 9)
            default: 20
            }
        }
        let tilts = Self.events(Self.tilting(seconds: 12, angle: angle, gyroscope: gyroscope), settings)
            .compactMap { e -> TiltEvent? in if case .tilt(let x) = e { x } else { nil } }
        try #require(tilts.count == 2, "\(tilts)")
        #expect(tilts[0].isTilted && tilts[0].date > 2 && tilts[0].date < 3.5)
        #expect(tilts[0].angle >= 30 * Double.pi / 180)
        #expect(!tilts[1].isTilted && tilts[1].date > 9 && tilts[1].date < 10.5)
        #expect(tilts[1].angle < 25 * Double.pi / 180)
    }

    @Test("tilt against a given reference attitude")
    func tiltReference() throws {
        var settings = MotionEventDetector.Settings.defaults
        settings.tiltEnabled = true
        // The device's resting attitude is 40° about x; at rest face up it is 40° away from it.
        let reference = Quaternion(axis: Vector3(1, 0, 0), angle: 40 * Double.pi / 180)
        settings.tilt.referenceGravity = TiltDetector.gravity(inAttitude: reference)
        let flat = Self.tilting(seconds: 2, angle: { _ in 0 }, gyroscope: false)
        let tilts = Self.events(flat, settings).filter { $0.kind == .tilt }
        try #require(tilts.count == 1)
        guard case .tilt(let t) = tilts[0] else { return }
        #expect(t.isTilted && abs(t.angle - 40 * Double.pi / 180) < 1e-6)
    }

    @Test("one sample's events come in a fixed order, and an empty update yields none")
    func order() {
        let f = FallDetectionEvent(date: 1, peakAcceleration: 3, orientationChange: 1.2, detectionDate: 3)
        let events = MotionEventDetector.Events(
            fallResolution: f.resolved(.rejected, at: 3),
            freeFall: FreeFallEvent(date: 2, duration: 0.2, height: FreeFallEvent.height(falling: 0.2)),
            impact: ImpactEvent(date: 2.2, peakAcceleration: 4, duration: 0.02),
            fall: FallDetectionEvent(date: 2.2, peakAcceleration: 4, orientationChange: 1.5, detectionDate: 4.2),
            tilt: TiltEvent(date: 4.2, isTilted: true, angle: 1)
        )
        #expect(events.map(\.kind) == [.fall, .freeFall, .impact, .fall, .tilt])
        #expect(events.map(\.date) == [1, 2, 2.2, 2.2, 4.2])
        #expect(MotionEventDetector.Events().isEmpty && Array(MotionEventDetector.Events()).isEmpty)
    }

    @Test("samples that are not finite, or that go back in time, neither crash nor invent events")
    func badInput() {
        var d = MotionEventDetector()
        var out: [MotionEvent] = []
        for n in 0..<600 {
            let t = n == 300 ? 1.0 : Double(n) / 100  // one step back in time
            let a = n % 97 == 0 ? Vector3(.nan, 0, -1) : Vector3(0, 0, -1)
            out += Array(
                d.update(timestamp: t, acceleration: a, rotationRate: n % 89 == 0 ? Vector3(.infinity, 0, 0) : nil)
            )
        }
        #expect(out.isEmpty)
    }
}
