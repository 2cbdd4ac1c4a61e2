import AgentConfig
import AgentControl
import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// One device streaming the durable 200 Hz QoS 1 accelerometer (the payload's seq is the log's), a persistent
/// subscriber to it and its status, an observer of its replies, metrics and status, and a flooder: the scenario
/// of ControlFloodEndToEndTests in the simulation. The agent's client reads up to 1000 messages a network turn
/// into an inbox of 256 (a network thread that reads a burst while the agent is busy), so a flood outruns it:
/// the broker drops QoS 0 beyond its `max_queued_messages` (1000), the agent's client what it read but could not
/// take (`connection.inboundDropped`), as a real agent's did under the end-to-end floods.
final class FloodScenario {
    let world = SimulationWorld()
    let broker: MemoryBroker
    let deviceID: String
    let device: SimulatedAgent
    let log = ControlLogRecorder()
    let subscriber: SimulatedTool
    let observer: SimulatedTool
    let flooder: SimulatedTool
    let topics: TopicScheme

    init(_ deviceID: String) throws {
        self.deviceID = deviceID
        topics = TopicScheme(root: "motion/\(deviceID)")
        broker = world.addBroker(name: "broker")
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 200, qos: 1, durable: true)]
        fleet.groups = ["flooded"]
        fleet.metricsIntervalS = 1
        device = world.addDevice(
            deviceID,
            configuration: try fleet.configuration(deviceID: deviceID),
            seed: 40,
            log: log
        )
        subscriber = try SimulatedTool(
            world,
            clientID: "rel-sub-\(deviceID)",
            cleanSession: false,
            subscribe: [topics.stream(.accelerometer), topics.status]
        )
        observer = try SimulatedTool(
            world,
            clientID: "observer",
            subscribe: [topics.controlReply, topics.metrics, topics.status]
        )
        flooder = try SimulatedTool(world, clientID: "flooder-\(deviceID)")
        world.start(device, readsPerPump: 1000, eventBacklogLimit: 256)
    }

    private var parsed = 0
    private var parsedSeqs: [Int] = []

    /// The seqs of the accelerometer messages received, in order (each message parsed once: the checks poll
    /// this while thousands arrive).
    func seqs() -> [Int] {
        let messages = subscriber.messages(on: topics.stream(.accelerometer))
        for message in messages.dropFirst(parsed) {
            if let seq = SimulatedTool.json(message)["seq"] as? Int { parsedSeqs.append(seq) }
        }
        parsed = messages.count
        return parsedSeqs
    }

    /// Whether the newest accelerometer message received was sampled less than half a second ago.
    func caughtUp() -> Bool {
        guard let last = subscriber.messages(on: topics.stream(.accelerometer)).last,
            let time = SimulatedTool.json(last)["time"] as? Double
        else { return false }
        return world.clock.realtimeSeconds() - time < 0.5
    }

    /// Whether every seq up to the newest received has arrived.
    func drained() -> Bool {
        let seqs = Set(seqs())
        guard let newest = seqs.max() else { return false }
        return seqs.count == newest && seqs.min() == 1
    }

    /// Publishes `count` payloads made by `payload(i)` on `topic` at QoS 0 as fast as the flooder's client takes
    /// them (until its queue of unwritten messages is full, then again a millisecond later), and runs the world
    /// until the last is sent.
    func flood(_ topic: String, count: Int, payload: @escaping (Int) -> [UInt8]) {
        var sent = 0
        func next(_ world: SimulationWorld) {
            while sent < count {
                do {
                    _ = try payload(sent).withUnsafeBytes {
                        try flooder.client.publish(topic: topic, payload: $0, qos: 0, retain: false)
                    }
                } catch {
                    break
                }
                sent += 1
            }
            if sent < count { world.schedule(after: 0.001, next) }
        }
        world.schedule(after: 0, next)
        world.run(until: { sent >= count }, timeout: 60)
    }

    /// Whether the agent reads through the flood on `topic`: a ping sent after it, with correlation data, is
    /// answered (applied or refused for the rate limit, the reply carries the data) — sent again every 2 s with a
    /// new id, for the agent drops what comes while its inbox is full.
    func readThrough(_ topic: String) -> Bool {
        let marker = Array("flood-read-through".utf8)
        let before = observer.messages.count
        for attempt in 1...45 {
            try? flooder.client.publishRequest(
                topic: topic,
                payload: Array(#"{"id":"read-through-\#(attempt)","command":"ping"}"#.utf8),
                responseTopic: topics.controlReply,
                correlationData: marker
            )
            let answered = observer.waitUntil(timeout: 2) {
                observer.messages.dropFirst(before).contains {
                    $0.topic == topics.controlReply && $0.correlationData == marker
                }
            }
            if answered {
                return true
            }
        }
        return false
    }

    private var scannedLines = 0

    /// Whether a line of the agent's log contains `text`, reading each line once: polled while the agent logs a
    /// line per refusal of a flood, a scan of the whole log per poll was a fifth of a flood test's time.
    func logged(_ text: String) -> Bool {
        let lines = log.lines
        defer { scannedLines = lines.count }
        return lines[scannedLines...].contains { $0.contains(text) }
    }

    /// The largest `connection.inboundDropped` the metrics reported, nil when none did.
    func inboundDropped() -> Int? {
        observer.json(on: topics.metrics).compactMap { ($0["connection"] as? [String: Any])?["inboundDropped"] as? Int }
            .max()
    }

    /// SIGTERM, the ordered shutdown; the goodbye's outbox object.
    func stop(sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        world.terminate(device)
        #expect(ControlScenario.waitForExit(world, device), "the agent did not stop", sourceLocation: sourceLocation)
        #expect(device.process?.ended.map { if case .success = $0 { true } else { false } } == true)
        let goodbye = try #require(
            subscriber.json(on: topics.status).last {
                $0["state"] as? String == "offline" && $0["reason"] as? String == "shutdown"
            },
            "no goodbye status",
            sourceLocation: sourceLocation
        )
        return try #require(goodbye["outbox"] as? [String: Any], sourceLocation: sourceLocation)
    }

    /// Loses nothing — every seq from 1 to the last appended arrived — and stalls nothing: every record was
    /// acknowledged, none dropped, the log's cursor at its end.
    func expectLostNothing(_ outbox: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let appended = try #require(outbox["durableAppended"] as? Int, sourceLocation: sourceLocation)
        let unique = Set(seqs())
        let lost = (1...appended).filter { !unique.contains($0) }.count
        #expect(lost == 0, "\(lost) of \(appended) lost", sourceLocation: sourceLocation)
        #expect(
            unique.count == appended && unique.min() == 1 && unique.max() == appended,
            sourceLocation: sourceLocation
        )
        #expect(outbox["durableDepth"] as? Int == 0, "\(outbox)", sourceLocation: sourceLocation)
        #expect(outbox["durableAcknowledged"] as? Int == appended, "\(outbox)", sourceLocation: sourceLocation)
        #expect(outbox["durableDropped"] as? Int == 0, "\(outbox)", sourceLocation: sourceLocation)
    }
}

/// Acknowledgements on their own path: a flood on any topic the agent listens to cannot starve the durable
/// stream's QoS 1 window or its log's cursor; commands in a flood are answered within the rate limit; desired state
/// converges after one. Moved from ControlFloodEndToEndTests; on virtual time nothing waits on a loaded host.
///
/// A flood is 5000 messages here, not the end-to-end tests' 50 000: sent as fast as the flooder's client takes
/// them, all but about the broker's queue (1000) and what the agent reads meanwhile are dropped by the broker
/// either way (of 50 000, 46 400 were), and routing each dropped message costs the in-memory broker about 80 µs
/// of a debug build — 4 s a flood.
@Suite struct ControlFloodSimulationTests {
    static let floodCount = 5000

    @Test func aControlFloodDuringADurableQoS1StreamLosesNothingAndStallsNothing() throws {
        let run = try FloodScenario("flood")
        #expect(run.subscriber.waitUntil(timeout: 20) { run.seqs().count >= 200 })
        let beforeFlood = run.seqs().max() ?? 0
        run.flood(run.topics.control, count: Self.floodCount) {
            Array(#"{"id":"flood-\#($0)","command":"status"}"#.utf8)
        }
        #expect(run.readThrough(run.topics.control), "the agent did not answer a command sent after the flood")
        // Stalls nothing: the stream runs on past the flood, live again.
        #expect(
            run.subscriber.waitUntil(timeout: 60) { (run.seqs().max() ?? 0) > beforeFlood + 400 && run.caughtUp() },
            "the durable stream stalled after the flood"
        )
        // The flood was counted by the metrics, whatever part of it the agent could not take.
        #expect(run.observer.waitUntil(timeout: 10) { run.inboundDropped() != nil })
        #expect(run.subscriber.waitUntil(timeout: 30) { run.drained() }, "the durable stream's backlog did not drain")
        let outbox = try run.stop()
        print(
            "flood: \(Self.floodCount) control messages during 200 Hz QoS 1 durable: sent \(outbox["durableAppended"] ?? "?"), received \(run.seqs().count), replies \(run.observer.messages(on: run.topics.controlReply).count), inbound dropped \(run.inboundDropped() ?? -1), by the broker \(run.broker.drops(clientID: "motion-agent-flood").total)"
        )
        try run.expectLostNothing(outbox)
    }

    /// The topics besides the device's own control topic that the agent listens to.
    enum FloodTopic: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case groupControl, fleetControl, deviceDesired, groupDesired, fleetDesired

        var testDescription: String { rawValue }

        func topic(device: String) -> String {
            switch self {
            case .groupControl: TopicScheme.groupControl("flooded")
            case .fleetControl: TopicScheme.fleetControl
            case .deviceDesired: TopicScheme(root: "motion/\(device)").desired
            case .groupDesired: TopicScheme.groupDesired("flooded")
            case .fleetDesired: TopicScheme.fleetDesired
            }
        }

        var carriesCommands: Bool { self == .groupControl || self == .fleetControl }

        /// Valid and invalid mixed: for commands, pings and every kind of refusal; for desired documents, one
        /// in 50 a new valid version (a setting of a stream that is off, so the durable stream is untouched), the
        /// rest malformed, mistyped, out of range, misplaced or stale.
        func payload(_ i: Int) -> [UInt8] {
            if carriesCommands {
                switch i % 5 {
                case 0: return Array(#"{"id":"f-\#(i)","command":"ping"}"#.utf8)
                case 1:
                    return Array(#"{"id":"f-\#(i)","command":"set-rate","stream":"gyroscope","rate_hz":"fast"}"#.utf8)
                case 2: return Array(#"{"id":"f-\#(i)","command":"self-destruct"}"#.utf8)
                case 3: return [0xFF, 0xFE, UInt8(i & 0x7F), 0x7B]
                default: return Array(#"{"id":"f-\#(i)","#.utf8)
                }
            }
            if i % 50 == 0 {
                return Array(
                    #"{"version": \#(i / 50 + 1), "streams": {"gyroscope": {"rate_hz": \#(25 + (i / 50) % 4 * 25)}}}"#
                        .utf8
                )
            }
            switch i % 5 {
            case 0: return Array(#"{"version": 1, "streams": {"gyroscope": {"rate_hz": 25}}}"#.utf8)
            case 1: return Array(#"{"version": \#(i), "streams": {"gyroscope": {"rate_hz": 5000}}}"#.utf8)
            case 2: return Array(#"{"version": "x", "mqtt": {"host": "elsewhere"}}"#.utf8)
            case 3: return [0xFF, 0xFE, UInt8(i & 0x7F), 0x7B]
            default: return Array(#"{"version": \#(i), "streams": {"#.utf8)
            }
        }
    }

    /// A flood on each other topic the agent listens to, valid and invalid mixed, during the durable QoS 1
    /// stream: the stream loses nothing and stalls nothing, commands are answered within the documented rate limit
    /// (control.rate_limit_per_s, default 10/s, bursts of 20; the rest 429), desired state still converges
    /// afterwards, and inbound drops make the agent subscribe to the desired-state topics again.
    @Test(arguments: FloodTopic.allCases)
    func aFloodOnAnotherTopicLosesNothingAndStallsNothing(_ kind: FloodTopic) throws {
        let device = "flood-\(kind.rawValue)"
        let run = try FloodScenario(device)
        let topic = kind.topic(device: device)
        #expect(run.subscriber.waitUntil(timeout: 20) { run.seqs().count >= 200 })
        let beforeFlood = run.seqs().max() ?? 0
        let floodStart = run.world.now
        run.flood(topic, count: Self.floodCount, payload: kind.payload)
        if kind.carriesCommands {
            #expect(run.readThrough(topic), "the agent did not answer a command sent after the flood")
        }
        // Stalls nothing: the stream runs on past the flood, live again.
        #expect(
            run.subscriber.waitUntil(timeout: 60) { (run.seqs().max() ?? 0) > beforeFlood + 400 && run.caughtUp() },
            "the durable stream stalled after the flood"
        )

        // Desired state still converges: a last valid document, retained, is applied.
        var converged = true
        if !kind.carriesCommands {
            try run.flooder.publish(
                topic,
                #"{"version": 100000, "streams": {"gyroscope": {"rate_hz": 200}}}"#,
                qos: 1,
                retain: true
            )
            converged = run.observer.waitUntil(timeout: 30) {
                run.observer.status(device)?.configuration?.desired.values.contains(100_000) == true
            }
            #expect(converged, "the last desired document was not applied")
        }
        // The agent's inbox overflowed (here always: it reads a thousand a turn into 256), and drops on any topic
        // make it fetch the retained desired documents again once the drops stop.
        let dropped = run.inboundDropped() ?? 0
        #expect(dropped > 0, "the flood overflowed nothing: the resubscription is not exercised")
        #expect(
            run.observer.waitUntil(timeout: 60) { run.logged("subscribing to the desired-state topics again") },
            "no resubscription after the flood"
        )
        let resubscriptions = run.log.count(of: "subscribing to the desired-state topics")
        #expect(run.subscriber.waitUntil(timeout: 30) { run.drained() }, "the durable stream's backlog did not drain")
        let outbox = try run.stop()
        // Every command the agent read was answered before its goodbye: from the flood's start to now bounds the
        // time over which the rate limit refilled.
        let readWindow = run.world.now - floodStart
        let replies = run.observer.json(on: run.topics.controlReply)
        let applied = replies.filter { $0["code"] as? Int == 200 }.count
        let limited = replies.filter { $0["code"] as? Int == 429 }.count
        let refused = replies.count - applied - limited
        print(
            "flood: \(Self.floodCount) messages on \(kind.rawValue) (valid and invalid) during 200 Hz QoS 1 durable: stream sent \(outbox["durableAppended"] ?? "?"); replies 200: \(applied), 429: \(limited), other refusals: \(refused); inbound dropped \(dropped), by the broker \(run.broker.drops(clientID: "motion-agent-\(device)").total); desired topics subscribed again \(resubscriptions)×; desired converged \(converged); read window \(readWindow) s"
        )
        try run.expectLostNothing(outbox)
        if kind.carriesCommands {
            // The rate limit: at most the burst plus the sustained rate over the time the flood lasted were read
            // at all (answered 200 or refused for what they were); everything else was answered 429 or dropped.
            #expect(applied + refused <= 20 + Int(10 * (readWindow + 1)))
            #expect(limited > 0)
        } else {
            #expect(replies.isEmpty, "desired documents are not answered")
        }
    }

    /// A layer cleared while the device was away (the clear is a retained document), and a flood on its group's
    /// control topic running when it comes back, from before it connects until 3 s after its birth. Whether the
    /// clear arrives before the inbox fills or is dropped by it (then the agent subscribes to the desired topics
    /// again once the drops stop, and the broker hands it over again), the layer is gone without another
    /// connection.
    @Test func aLayerClearedWhileAwayIsRemovedEvenWithAFloodAtConnection() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        var fleet = SimulatedFleetConfiguration()
        fleet.groups = ["flooded"]
        let log = ControlLogRecorder()
        let device = world.addDevice(
            "flood-cleared",
            configuration: try fleet.configuration(deviceID: "flood-cleared"),
            seed: 41,
            log: log
        )
        let status = try SimulatedTool(
            world,
            clientID: "status",
            subscribe: ["motion/flood-cleared/status", "motion/flood-cleared/configuration"]
        )
        let flooder = try SimulatedTool(world, clientID: "flooder-cleared")
        try flooder.publish(
            TopicScheme.fleetDesired,
            #"{"version": 1, "streams": {"accelerometer": {"rate_hz": 10}}}"#,
            retain: true
        )
        world.start(device, readsPerPump: 1000, eventBacklogLimit: 256)
        #expect(ControlScenario.waitFor(status, "flood-cleared", "streams.accelerometer.rate_hz", "10"))
        world.terminate(device)
        #expect(ControlScenario.waitForExit(world, device))
        #expect(device.process?.ended.map { if case .success = $0 { true } else { false } } == true)

        try flooder.publish(TopicScheme.fleetDesired, #"{"version": 2, "clear": true}"#, retain: true)
        let online = { status.json(on: "motion/flood-cleared/status").filter { $0["state"] as? String == "online" } }
        let onlineBefore = online().count
        // Pings on the group topic, 500 at a time every 0.2 s (more than the agent's inbox holds) from before the agent connects until 3 s after its
        // birth (the birth precedes its SUBSCRIBE), so the retained documents arrive in the middle of the flood.
        var sent = 0
        var born: Double?
        func next(_ world: SimulationWorld) {
            if born == nil, online().count > onlineBefore { born = world.now }
            if let born, world.now - born > 3 { return }
            for _ in 0..<500 {
                let payload = Array(#"{"id":"c-\#(sent)","command":"ping"}"#.utf8)
                _ = try? payload.withUnsafeBytes {
                    try flooder.client.publish(
                        topic: TopicScheme.groupControl("flooded"),
                        payload: $0,
                        qos: 0,
                        retain: false
                    )
                }
                sent += 1
            }
            world.schedule(after: 0.2, next)
        }
        world.schedule(after: 0, next)
        world.run(for: 0.05)
        world.start(device, readsPerPump: 1000, eventBacklogLimit: 256)
        #expect(
            world.run(until: { born.map { world.now - $0 > 3 } ?? false }, timeout: 120),
            "the agent did not come online"
        )
        let removed = "fleet desired state cleared by v2 from motion/fleet/desired"
        print(
            "flood at connection: \(sent) commands on the group topic; layer removed \(log.contains(removed) ? "during the flood" : "after it")"
        )
        // Whether the clear arrived before the inbox filled or after the agent subscribed again, the layer is gone
        // without another connection.
        #expect(status.waitUntil(timeout: 30) { log.contains(removed) }, "\(log.lines.suffix(20))")
        #expect(
            status.waitUntil(timeout: 20) {
                status.status("flood-cleared")?.state == .online
                    && status.status("flood-cleared")?.configuration?.desired == ["fleet": 2]
            },
            "the fleet layer gone from the retained status"
        )
        #expect(
            ControlScenario.setting(status, "flood-cleared", "streams.accelerometer.rate_hz").source == "config.yaml"
        )
        #expect(device.starts == 2, "another connection, not another start: \(device.starts) starts")
        world.terminate(device)
        #expect(ControlScenario.waitForExit(world, device))
    }
}
