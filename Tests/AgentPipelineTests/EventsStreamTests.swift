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

    /// The fall messages (first report and follow-ups) the outbox holds, oldest first, with their seq.
    static func drainFalls(_ outbox: Outbox) -> [(seq: UInt64, fall: FallDetectionEvent)] {
        var falls: [(seq: UInt64, fall: FallDetectionEvent)] = []
        while outbox.withOldest(
            timeout: 0,
            { m in
                for decoded in (try? PayloadDecoder.decode(Array(m.payload), kind: .events)) ?? [] {
                    if case .motionEvent(.fall(let f)) = decoded.payload { falls.append((decoded.envelope.seq, f)) }
                }
                return .published
            }
        ) {}
        return falls
    }

    @Test func anOperatorResolutionIsPublishedAtOnceOnceAndAsReturned() throws {
        let outbox = Outbox(capacityBytes: 1 << 20, capacityMessages: 1 << 12)
        let hub = SensorHub(outbox: outbox)
        var settings = StreamName.events.descriptor.defaults
        settings.enabled = true
        let stream = EventsStream(settings: settings)
        stream.configure(settings: settings, sensorRatesHz: [.accelerometer: 100], topicID: 7)
        hub.setStreams([stream])
        let early = hub.withStreamsPublishing { _, context in stream.resolveFall(.confirmed, context: &context) }
        #expect(early == nil, "no sample, no fall: nothing to resolve")

        for sample in Self.drop(rateHz: 100) { hub.ingest(sample) }
        let reported = Self.drainFalls(outbox)
        try #require(reported.count == 1, "the drop is a fall: \(reported)")
        #expect(reported[0].fall.resolution == nil)

        let resolved = hub.withStreamsPublishing { _, context in stream.resolveFall(.confirmed, context: &context) }
        let confirmed = try #require(resolved)
        let published = Self.drainFalls(outbox)
        try #require(published.count == 1, "the follow-up goes out at once, not with the next sample")
        #expect(published[0].seq == reported[0].seq + 1)
        #expect(published[0].fall.resolution == .confirmed && confirmed.resolution == .confirmed)
        #expect(published[0].fall.date == reported[0].fall.date)
        // Returned as published: wall-clock dates (the payload rounds them to 3 decimals).
        #expect(abs(confirmed.date - published[0].fall.date) < 0.001 && confirmed.date > 1_000_000_000)
        let at = try #require(confirmed.resolutionDate)
        #expect(at >= confirmed.detectionDate, "dated by the last sample, after the detection")

        let again = hub.withStreamsPublishing { _, context in stream.resolveFall(.dismissed, context: &context) }
        #expect(again == nil, "a fall is resolved once")
        #expect(Self.drainFalls(outbox).isEmpty)
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
