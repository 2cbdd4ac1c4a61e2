import AgentPipeline
import AgentPorts
import MotionModel
import MotionWire
import Testing

/// The HID sensor drivers' rates (whole milliseconds, as the agent lists them) and what the status says about
/// a request they do not offer.
@Suite struct OfferedRateNotesTests {
    let hid = SensorDevice(
        id: "iio:device2",
        name: "accel_3d",
        sensors: [.accelerometer],
        supportedRates: .list([1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000])
    )

    func notes(accelerometerHz: Double, effectiveHz: Double? = nil) -> [String: String] {
        let planned = RatePlanner.plan(devices: [hid], demandsHz: [.accelerometer: accelerometerHz])
        var settings = StreamName.defaultSettings
        settings[.accelerometer]!.rateHz = accelerometerHz
        for name in StreamName.allCases where name != .accelerometer { settings[name]!.enabled = false }
        return OfferedRateNotes.notes(
            settings: settings,
            effectiveRatesHz: [.accelerometer: effectiveHz ?? accelerometerHz],
            planned: planned,
            devices: [hid]
        )
    }

    @Test func aRateTheDriverDoesNotOfferIsNamedWithWhatItRunsAt() throws {
        let note = try #require(notes(accelerometerHz: 300)["streams.accelerometer.rate_hz"])
        #expect(
            note == "accel_3d (iio:device2) offers no 300 Hz: it samples at 500 Hz and the stream is decimated to "
                + "300 Hz on average, at uneven intervals; for even intervals ask for a rate it offers "
                + "(1 2 4 5 8 10 20 25 40 50 100 125 200 250 500 1000)"
        )
    }

    @Test func aWholeMultipleIsEvenAndNeedsNoNote() throws {
        // 0.5 Hz from the 1 Hz the driver runs at: every second sample, exactly what was asked.
        #expect(notes(accelerometerHz: 0.5).isEmpty)
        let uneven = try #require(notes(accelerometerHz: 3)["streams.accelerometer.rate_hz"])
        #expect(uneven.contains("offers no 3 Hz: it samples at 4 Hz"), "\(uneven)")
        #expect(uneven.contains("at uneven intervals"), "\(uneven)")
    }

    @Test func anOfferedRateOrAClampedOneHasNoNoteHere() {
        #expect(notes(accelerometerHz: 250).isEmpty)
        #expect(notes(accelerometerHz: 1000).isEmpty)
        // Clamped (the stream delivers less than asked): AgentStatus.hardwareNotes says so instead.
        #expect(notes(accelerometerHz: 300, effectiveHz: 250).isEmpty)
    }
}
