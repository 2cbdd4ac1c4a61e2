import AgentConfig
import AgentPipeline
import AgentPorts
import MotionModel
import MotionWire
import Testing

/// The motion events stream: the detector's events go out at once, on the events topic, with wall-clock dates,
/// and read back with the generated decoder.
@Suite struct EventsStreamTests {
    /// A device at rest face up, dropped: 0.3 s of free fall, a 5 g landing, then still on its side.
    static func drop(rateHz: Double) -> [IMUSample] {
        var samples: [IMUSample] = []
        var t = 0.0
        func add(_ a: Vector3, for seconds: Double) {
            let end = t + seconds
            while t < end {
                samples.append(IMUSample(timestamp: t, acceleration: a))
                t += 1 / rateHz
            }
        }
        add(Vector3(x: 0, y: 0, z: -1), for: 2)
        add(Vector3(x: 0, y: 0, z: 0), for: 0.3)
        add(Vector3(x: 1, y: 0, z: -4.9), for: 0.03)
        add(Vector3(x: 1, y: 0, z: 0), for: 5)
        return samples
    }

    @Test func aDropIsAFreeFallThenAnImpactPublishedAtOnceWithWallClockDates() throws {
        let outbox = Outbox(capacityBytes: 1 << 20, capacityMessages: 1 << 12)
        let hub = SensorHub(outbox: outbox)
        var settings = StreamName.events.descriptor.defaults
        settings.enabled = true
        let stream = EventsStream(settings: settings)
        stream.configure(settings: settings, sensorRatesHz: [.accelerometer: 100], topicID: 7)
        #expect(stream.effectiveRateHz == 100)
        hub.setStreams([stream])
        for sample in Self.drop(rateHz: 100) { hub.ingest(sample) }

        var messages: [(qos: Int, message: WireMessage)] = []
        while outbox.withOldest(
            timeout: 0,
            { m in
                #expect(m.topicID == 7)
                if let decoded = try? PayloadDecoder.decode(Array(m.payload), kind: .events).first {
                    messages.append((m.qos, decoded))
                }
                return .published
            }
        ) {}
        let kinds = messages.compactMap { m -> MotionEvent.Kind? in
            guard case .motionEvent(let e) = m.message.payload else { return nil }
            return e.kind
        }
        #expect(kinds.prefix(2) == [.freeFall, .impact], "\(kinds)")
        for (qos, message) in messages {
            #expect(qos == 1, "the events stream's default QoS")
            guard case .motionEvent(let event) = message.payload else { continue }
            // The payload's dates are wall-clock Unix seconds, like the envelope's `time`, not the sample clock.
            #expect(event.date > 1_000_000_000 && abs(message.envelope.time - event.date) < 1)
            if case .freeFall(let f) = event { #expect(abs(f.duration - 0.3) < 0.03 && f.height > 0.3) }
            if case .impact(let i) = event { #expect(abs(i.peakAcceleration - 5) < 0.01) }
        }
    }

    @Test func aStoppedStreamPublishesNothing() {
        let outbox = Outbox(capacityBytes: 1 << 20, capacityMessages: 1 << 12)
        let hub = SensorHub(outbox: outbox)
        var settings = StreamName.events.descriptor.defaults
        settings.enabled = false
        let stream = EventsStream(settings: settings)
        stream.configure(settings: settings, sensorRatesHz: [.accelerometer: 100], topicID: 0)
        #expect(stream.sensorDemandsHz(settings: settings).isEmpty && stream.effectiveRateHz == 0)
        hub.setStreams([stream])
        for sample in Self.drop(rateHz: 100) { hub.ingest(sample) }
        #expect(outbox.withOldest(timeout: 0, { _ in .published }) == false)
    }
}
