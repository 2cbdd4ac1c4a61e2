import AgentPipeline
import AgentPorts
import MotionModel
import MotionWire
import Testing

/// The temperature stream: the latest temperature any sample carried, at its rate, paced by the accelerometer;
/// nothing before a temperature has arrived.
@Suite struct TemperatureStreamTests {
    static func published(_ outbox: Outbox) -> [TemperatureData] {
        var values: [TemperatureData] = []
        while outbox.withOldest(
            timeout: 0,
            { m in
                if case .temperature(let t)? = try? PayloadDecoder.decode(Array(m.payload), kind: .temperature)
                    .first?.payload
                {
                    values.append(t)
                }
                return .published
            }
        ) {}
        return values
    }

    @Test func theLatestTemperatureAtTheRateAndNothingBeforeOneArrives() {
        let outbox = Outbox(capacityBytes: 1 << 20, capacityMessages: 1 << 12)
        let hub = SensorHub(outbox: outbox)
        var settings = StreamName.temperature.descriptor.defaults
        settings.enabled = true
        settings.rateHz = 2
        let stream = TemperatureStream(settings: settings)
        stream.configure(settings: settings, sensorRatesHz: [.accelerometer: 100], topicID: 3)
        #expect(stream.effectiveRateHz == 2)
        hub.setStreams([stream])
        // 1 s of accelerometer samples without a temperature: nothing.
        for k in 0..<100 { hub.ingest(IMUSample(timestamp: Double(k) / 100, acceleration: Vector3(0, 0, -1))) }
        #expect(Self.published(outbox).isEmpty)
        // A barometer sample brings 24.5 °C, then the die's 31.25 °C rides on the accelerometer's from 2 s.
        hub.ingest(IMUSample(timestamp: 1.005, pressureKPa: 101.3, temperatureC: 24.5))
        for k in 100..<300 {
            var sample = IMUSample(timestamp: Double(k) / 100, acceleration: Vector3(0, 0, -1))
            if k >= 200 { sample.temperatureC = 31.25 }
            hub.ingest(sample)
        }
        let values = Self.published(outbox)
        #expect((3...5).contains(values.count), "2 Hz over 2 s: \(values.map(\.timestamp))")
        #expect(values.first?.temperatureC == 24.5)
        #expect(values.last?.temperatureC == 31.25)
        #expect(values.allSatisfy { $0.timestamp >= 1 })

        stream.configure(settings: settings, sensorRatesHz: [:], topicID: 3)
        #expect(stream.effectiveRateHz == 0 && !stream.consumesSamples, "no accelerometer: stopped")
    }
}
