import MotionEstimation
import MotionModel
import Testing

@Suite("Altimeter")
struct AltimeterTests {
    @Test("relative altitude follows a 10 m climb, from zero")
    func relative() throws {
        var alt = Altimeter()
        let firstUpdate = alt.update(IMUSample(timestamp: 0, pressureKPa: 100.0))
        let first = try #require(firstUpdate)
        #expect(first.relativeAltitude == 0)
        var last: AltitudeData?
        for i in 1...400 {
            let t = Double(i) * 0.04
            let h = min(t, 10.0)
            last = alt.update(
                IMUSample(timestamp: t, pressureKPa: StandardAtmosphere.pressure(altitude: h, referenceKPa: 100.0))
            )
        }
        let data = try #require(last)
        #expect(abs(data.relativeAltitude - 10) < 0.05)
        #expect(alt.update(IMUSample(timestamp: 20, acceleration: .zero)) == nil)
    }

    @Test("absolute altitude from the standard atmosphere and a configured sea-level pressure")
    func absolute() throws {
        var settings = Altimeter.Settings.defaults
        settings.seaLevelPressureKPa = 102.0
        settings.seaLevelPressureUncertaintyKPa = 0.1
        var alt = Altimeter(settings: settings)
        #expect(alt.absoluteAltitude == nil)
        let p = StandardAtmosphere.pressure(altitude: 500, referenceKPa: 102.0)
        var sign = 1.0
        for i in 0..<2000 {
            sign = -sign
            alt.update(IMUSample(timestamp: Double(i) * 0.04, pressureKPa: p + sign * 0.001))  // ±1 Pa noise
        }
        let a = try #require(alt.absoluteAltitude)
        #expect(abs(a.altitude - 500) < 0.1)
        // 0.1 kPa of QNH uncertainty is ≈ 8.5 m near 500 m.
        #expect(a.accuracy > 7 && a.accuracy < 10)
        // ±1 Pa noise is ±0.085 m raw; the smoothing makes the output quieter.
        #expect(a.precision > 0.005 && a.precision < 0.085)
        #expect(abs(StandardAtmosphere.altitude(pressureKPa: 101.325)) < 1e-9)
        // ISA: 89.876 kPa at 1000 m.
        #expect(abs(StandardAtmosphere.pressure(altitude: 1000) - 89.876) < 0.01)
    }
}
