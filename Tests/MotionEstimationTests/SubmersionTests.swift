import MotionEstimation
import MotionModel
import Testing

@Suite("Submersion")
struct SubmersionTests {
    static let surface = 101.0

    static func pressure(depth: Double, density: Double = 997) -> Double {
        surface + density * standardGravity * depth / 1000
    }

    @Test("depth from pressure with fresh and salt water")
    func depth() throws {
        for density in [SubmersionEstimator.Settings.freshWaterDensity, SubmersionEstimator.Settings.saltWaterDensity] {
            var settings = SubmersionEstimator.Settings.defaults
            settings.waterDensity = density
            var e = SubmersionEstimator(settings: settings)
            _ = e.update(IMUSample(timestamp: 0, pressureKPa: Self.surface, temperatureC: 24))
            let mUpdate = e.update(
                IMUSample(timestamp: 1, pressureKPa: Self.pressure(depth: 3, density: density), temperatureC: 18)
            )
            let m = try #require(mUpdate)
            #expect(abs(m.measurement.depth - 3) < 1e-9)
            #expect(m.measurement.state == .submergedDeep)
            #expect(m.measurement.surfacePressureKPa == Self.surface)
            #expect(m.measurement.temperatureC == 18)
        }
    }

    @Test("state transitions down and up, with hysteresis at each boundary")
    func transitions() throws {
        var e = SubmersionEstimator()  // submerged 0.3 m, deep 1 m, approaching 5 m, past 6 m, hysteresis 0.1 m
        var events: [SubmersionData.Event] = []
        let depths = [0.0, 0.25, 0.35, 0.25, 0.24, 0.15, 0.4, 1.2, 0.95, 0.85, 5.1, 6.2, 5.95, 5.85, 3, 0.5, 0.1]
        for (i, d) in depths.enumerated() {
            let rUpdate = e.update(IMUSample(timestamp: Double(i), pressureKPa: Self.pressure(depth: d)))
            let r = try #require(rUpdate)
            if let ev = r.event { events.append(ev) }
        }
        #expect(
            events.map(\.state) == [
                .submergedShallow,  // 0.35
                .notSubmerged,  // 0.15 (0.25 and 0.24 stay shallow: the threshold back is 0.2 m, and the surface
                // pressure followed the 0.25 m dip a little while still dry, so the depths read ≈ 2 cm less)
                .submergedShallow,  // 0.4
                .submergedDeep,  // 1.2 (0.95 stays deep)
                .submergedShallow,  // 0.85
                .approachingMaxDepth,  // 5.1
                .pastMaxDepth,  // 6.2 (5.95 stays past)
                .approachingMaxDepth,  // 5.85
                .submergedDeep,  // 3
                .submergedShallow,  // 0.5
                .notSubmerged,  // 0.1
            ]
        )
        #expect(events.map(\.date) == [2, 5, 6, 7, 9, 10, 11, 13, 14, 15, 16])
    }

    @Test("surface pressure follows the weather while dry, not while diving")
    func surfaceTracking() throws {
        var e = SubmersionEstimator()
        // The air pressure falls 0.2 kPa over 10 minutes (a fast weather change; 2 cm of "depth" per 0.2 hPa).
        for i in 0...600 {
            _ = e.update(IMUSample(timestamp: Double(i), pressureKPa: Self.surface - 0.2 * Double(i) / 600))
        }
        let dry = try #require(e.surfacePressureKPa)
        #expect(abs(dry - (Self.surface - 0.2)) < 0.01)
        #expect(e.state == .notSubmerged)
        let rUpdate = e.update(IMUSample(timestamp: 601, pressureKPa: dry + 997 * standardGravity * 2 / 1000))
        let r = try #require(rUpdate)
        #expect(r.measurement.state == .submergedDeep)
        #expect(abs(r.measurement.depth - 2) < 0.01)
        #expect(e.surfacePressureKPa == dry)
    }
}
