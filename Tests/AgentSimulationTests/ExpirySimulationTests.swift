import AgentConfig
import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Synchronization
import Testing

/// `streams.<name>.expiry_s` on virtual time (moved from ExpiryEndToEndTests, issue 40): stale samples are dropped —
/// by the agent's outbox and durable log after an outage (on MQTT 5 and 3.1.1 alike), and by the broker for a
/// persistent subscriber away longer than the expiry (the MQTT 5 Message Expiry Interval the agent sends) — and
/// samples within their expiry are delivered. Counted by `seq`, exactly. Figures are printed with the prefix
/// `expiry (simulated):`.
@Suite struct ExpirySimulationTests {
    typealias Scenario = DeliveryScenario

    /// QoS 1 accelerometer (memory outbox) and gyroscope (durable log) at `rateHz`, both with a 2 s expiry.
    static func configuration(
        device: String,
        rateHz: Double,
        protocol mqttProtocol: String = "v5"
    ) throws
        -> AgentConfiguration
    {
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [
            .init("accelerometer", rateHz: rateHz, qos: 1),
            .init("gyroscope", rateHz: rateHz, qos: 1, durable: true),
        ]
        fleet.reconnectMaxDelay = 1
        return try fleet.configuration(
            deviceID: device,
            adding: [
                ("outbox.replay_rate", "5000"), ("mqtt.protocol", mqttProtocol),
                ("streams.accelerometer.expiry_s", "2"), ("streams.gyroscope.expiry_s", "2"),
            ]
        )
    }

    /// What one stream lost: the seqs 1…newest that never arrived.
    struct Loss {
        var newest: Int
        var missing: [Int]
        var firstDelivered: Scenario.Sample?

        init(_ samples: [Scenario.Sample]) {
            newest = samples.map(\.seq).max() ?? 0
            missing = Scenario.missing(samples.map(\.seq), upTo: newest)
            firstDelivered = samples.min { $0.seq < $1.seq }
        }

        /// Runs of consecutive missing seqs.
        var runs: Int { missing.isEmpty ? 0 : 1 + zip(missing, missing.dropFirst()).filter { $1 != $0 + 1 }.count }
    }

    /// The broker is down for 5 s while the agent samples at 200 Hz with a 2 s expiry: when it comes back, the
    /// agent sends only what is younger than 2 s — from the memory outbox and from the durable log — and counts
    /// the rest; on MQTT 3.1.1 too, where the broker cannot be told the expiry.
    @Test(arguments: ["v5", "v311"])
    func anOutageLongerThanTheExpiryDropsTheStaleSamplesAndCountsThemExactly(_ mqttProtocol: String) throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker", options: .init(persistence: true))
        let name = "expiry-outage-\(mqttProtocol)"
        let topics = TopicScheme(root: "motion/\(name)")
        let (accelerometer, gyroscope) = (topics.stream(.accelerometer), topics.stream(.gyroscope))
        let subscriber = try DeliveryPersistentSubscriber(
            world,
            clientID: "expiry-sub",
            subscribe: [accelerometer, gyroscope, topics.status]
        )
        broker.stop()
        subscriber.leave()
        let device = world.addDevice(
            name,
            configuration: try Self.configuration(device: name, rateHz: 200, protocol: mqttProtocol),
            seed: 21
        )
        world.start(device)
        world.run(for: 5)
        broker.start()
        try subscriber.comeBack()
        #expect(subscriber.waitUntil(timeout: 15) { !Scenario.births(subscriber, name).isEmpty })
        #expect(
            subscriber.waitUntil(timeout: 30) {
                Scenario.caughtUp(subscriber, accelerometer) && Scenario.caughtUp(subscriber, gyroscope)
            }
        )
        let outbox = try #require(Scenario.stop(world, device, subscriber), "no goodbye")
        let birth = try #require(Scenario.births(subscriber, name).first)
        #expect(birth.broker?.protocol == mqttProtocol)

        let memorySamples = Scenario.samples(subscriber, accelerometer)
        let durableSamples = Scenario.samples(subscriber, gyroscope)
        let memory = Loss(memorySamples)
        let durable = Loss(durableSamples)
        let droppedExpired = Int(try #require(outbox.droppedExpired))
        let durableExpired = Int(try #require(outbox.durableExpired))
        print(
            "expiry (simulated): broker down 5 s, 200 Hz QoS 1, expiry_s 2, \(mqttProtocol): memory outbox sent \(memory.newest), expired \(droppedExpired), not delivered \(memory.missing.count); durable log appended \(outbox.durableAppended ?? 0), expired \(durableExpired), not delivered \(durable.missing.count); first delivered samples \(birth.time - (memory.firstDelivered?.time ?? 0)) s and \(birth.time - (durable.firstDelivered?.time ?? 0)) s older than the birth"
        )
        // Every sample the agent made is either delivered or counted as expired — exactly, by seq.
        #expect(Int(outbox.enqueued) == memory.newest)
        #expect(Int(outbox.published) == memory.newest - droppedExpired)
        #expect(outbox.droppedOverflow == 0)
        #expect(droppedExpired > 0)
        #expect(memory.missing.count == droppedExpired)
        #expect(Int(outbox.durableAppended ?? 0) == durable.newest)
        #expect(durableExpired > 0)
        #expect(durable.missing.count == durableExpired)
        #expect(Int(outbox.durableDropped ?? 0) == durableExpired)
        #expect(outbox.durableDepth == 0)
        for (stream, samples, loss) in [("memory", memorySamples, memory), ("durable", durableSamples, durable)] {
            // The oldest went, and only they: one run from seq 1 (on virtual time no publisher is held back long
            // enough for expired and delivered seqs to interleave, as a loaded host's can).
            #expect(loss.missing == Array(1...max(1, loss.missing.count)), "\(stream): \(loss.missing)")
            // The expiry counts from when the agent took the sample in — the IMU hands samples over in blocks of
            // half a second — to its turn at the agent's return (the birth). Nothing delivered had waited longer than
            // its expiry then: no sample made more than 2.5 s before the birth arrived; every sample dropped had been
            // made more than 2 s before it. The samples made during the outage but within their expiry were
            // delivered (not only live ones).
            let age = { (sample: Scenario.Sample) in birth.time - sample.time }
            let stale = samples.filter { age($0) > 2 + VirtualSensorSource.blockSeconds }.map(\.seq)
            #expect(stale == [], "\(stream)")
            let newestDropped = try #require(loss.missing.last)
            let firstKept = try #require(samples.first { $0.seq == newestDropped + 1 })
            #expect(age(firstKept) + 1.0 / 200 > 2, "\(stream): seq \(newestDropped) was dropped younger than 2 s")
            #expect((loss.firstDelivered?.time ?? .infinity) < birth.time - 1.5, "\(stream)")
            #expect(Set(samples.map(\.seq)).count == samples.count, "\(stream): duplicates")
        }
    }

    /// The agent stays connected; a persistent subscriber goes away for 6 s. The broker queues the 50 Hz QoS 1
    /// samples for it and, by their MQTT 5 Message Expiry Interval (2 s), drops those older than that when it
    /// returns: it receives the queued samples of its last 2 s, then live ones, and nothing else is missing.
    @Test func aSubscriberAwayLongerThanTheExpiryMissesOnlyTheStaleSamples() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker")
        let name = "expiry-away"
        let topics = TopicScheme(root: "motion/\(name)")
        let streams = [topics.stream(.accelerometer), topics.stream(.gyroscope)]
        // When the broker took each sample (realtime), by topic and seq.
        let taken = Mutex<[String: [Int: Double]]>([:])
        let clock = world.clock
        broker.setPublishObserver { publication in
            guard streams.contains(publication.topic),
                let seq = Scenario.json(publication.payload)["seq"] as? Int
            else { return }
            let now = clock.realtimeSeconds()
            taken.withLock { $0[publication.topic, default: [:]][seq] = $0[publication.topic]?[seq] ?? now }
        }
        let subscriber = try DeliveryPersistentSubscriber(
            world,
            clientID: "expiry-sub",
            subscribe: streams + [topics.status]
        )
        let device = world.addDevice(name, configuration: try Self.configuration(device: name, rateHz: 50), seed: 22)
        world.start(device)
        #expect(subscriber.waitUntil(timeout: 15) { Scenario.seqs(subscriber, streams[0]).count >= 50 })
        // Gone without a word (its connection dropped; the broker keeps its session), back 6.25 s later: off the
        // half-second grid the samples are taken on, so no sample is exactly 2 s old when it returns.
        subscriber.leave()
        let left = world.clock.realtimeSeconds()
        world.run(for: 6.25)
        let returned = world.clock.realtimeSeconds()
        try subscriber.comeBack()
        // Live samples overtake the queued ones; let the queue drain before stopping.
        world.run(for: 2)
        #expect(subscriber.waitUntil(timeout: 10) { Scenario.caughtUp(subscriber, streams[0]) })
        let outbox = try #require(Scenario.stop(world, device, subscriber), "no goodbye")
        let expired = broker.drops(clientID: "expiry-sub").expired

        var missingInAll = 0
        for stream in streams {
            let samples = Scenario.samples(subscriber, stream)
            let loss = Loss(samples)
            let gapStart = try #require(loss.missing.first, "\(stream): nothing was dropped by the broker")
            let gapEnd = try #require(loss.missing.last)
            let afterGap = try #require(samples.first { $0.seq == gapEnd + 1 })
            let beforeGap = try #require(samples.first { $0.seq == gapStart - 1 })
            let takenAt = taken.withLock { $0[stream] ?? [:] }
            print(
                "expiry (simulated): subscriber away \(returned - left) s, 50 Hz QoS 1, expiry_s 2, \(stream): sent \(loss.newest), not delivered \(loss.missing.count) (seqs \(gapStart)…\(gapEnd), \(loss.runs) run(s)); first sample after the gap was \(returned - afterGap.time) s old when the subscriber returned"
            )
            missingInAll += loss.missing.count
            // Exactly the samples the broker took while the subscriber was away and more than 2 s before it
            // returned are missing: one run; every other sample arrived, once.
            let stale = takenAt.filter { $0.value > left && returned - $0.value > 2 }.map(\.key).sorted()
            #expect(loss.missing == stale, "\(stream)")
            #expect(loss.runs == 1, "\(stream): \(loss.missing)")
            #expect(Set(samples.map(\.seq)).count == samples.count, "\(stream): duplicates")
            #expect(beforeGap.time < left)
            // The samples queued within their expiry were delivered: the first after the gap was taken while the
            // subscriber was away, within the expiry (plus the half-second block it was handed over in) of its
            // return; the newest one dropped was older than the expiry.
            #expect(afterGap.time < returned)
            #expect(returned - afterGap.time <= 2 + VirtualSensorSource.blockSeconds)
            #expect(returned - (afterGap.time - 1.0 / 50) > 2)
        }
        // The broker counted each stale sample as expired, and nothing else.
        #expect(expired == missingInAll)
        #expect(broker.drops(clientID: "expiry-sub").total == expired)
        // The agent itself dropped nothing: it was connected throughout.
        #expect(outbox.droppedExpired == 0)
        #expect(outbox.durableExpired == 0)
        #expect(outbox.durableDropped == 0)
    }
}
