import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import Foundation
import Logging
import MotionWire
import Platform
import TestSupport
import Testing

/// The durable outbox against a real broker: outages, a killed agent, a full outbox and refused credentials,
/// each with exact counts. Figures are printed with the prefix `reliability:` (BENCHMARKS.md quotes them).
@Suite(.serialized) struct ReliabilityEndToEndTests {
    /// The durable 200 Hz QoS 1 accelerometer stream and nothing else, so the payload's seq is the log's.
    static let durableAccelerometer = """
        outbox:
          max_bytes: %MAX_BYTES%
          replay_rate: 500
        streams:
          accelerometer: {enabled: true, rate_hz: 200, qos: 1, durable: true}
          gyroscope: {enabled: false}
          magnetometer: {enabled: false}
          device-motion: {enabled: false}
          pedometer: {enabled: false}
          activity: {enabled: false}
          altimeter: {enabled: false}
          submersion: {enabled: false}
        """

    static func config(device: String, port: Int, maxBytes: Int = 8_388_608, extra: String = "") -> String {
        AgentProcess.config(
            device: device,
            port: port,
            simulatedRateHz: 200,
            streams: durableAccelerometer.replacingOccurrences(of: "%MAX_BYTES%", with: "\(maxBytes)"),
            extra: extra
        )
    }

    /// A subscriber whose session (QoS 1 subscription and queued messages) the broker keeps while it is away.
    struct PersistentSubscriber {
        let subscriber: CapturingSubscriber
        let options: BrokerConnectOptions

        init(_ broker: MosquittoBroker, device: String) async throws {
            try await self.init(
                options: broker.connectOptions(clientID: "rel-sub-\(device)", cleanSession: false),
                device: device
            )
        }

        /// With `options` of any broker (a RabbitMQ node) and their client id and session.
        init(options: BrokerConnectOptions, device: String) async throws {
            self.options = options
            subscriber = try await CapturingSubscriber(
                options: options,
                filters: ["motion/\(device)/accelerometer", "motion/\(device)/status"],
                qos: 1
            )
        }

        /// Connects again (same libmosquitto handle, same session) after the broker came back.
        func reconnect() async throws {
            let before = subscriber.connectionEvents.count
            try subscriber.client.connect(options)
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if subscriber.connectionEvents.dropFirst(before).contains(where: {
                    if case .connected = $0 { true } else { false }
                }) {
                    return
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            throw ReconnectTimeout()
        }

        func seqs(_ device: String) -> [Int] {
            subscriber.messages(on: "motion/\(device)/accelerometer").compactMap { payloadJSON($0)["seq"] as? Int }
        }

        /// How many births (status `online`) arrived.
        func births(_ device: String) -> Int {
            subscriber.messages(on: "motion/\(device)/status").map(payloadJSON).filter {
                $0["state"] as? String == "online"
            }.count
        }

        /// The last status document with `state` offline and reason shutdown (the goodbye).
        func goodbye(_ device: String) -> [String: Any]? {
            subscriber.messages(on: "motion/\(device)/status").map(payloadJSON).last {
                $0["state"] as? String == "offline" && $0["reason"] as? String == "shutdown"
            }
        }
    }

    struct ReconnectTimeout: Error, CustomStringConvertible {
        var description: String { "the persistent subscriber did not reconnect within 10 s" }
    }

    /// Waits until `condition` holds or `timeout` seconds pass; returns whether it held (`Polling.until`).
    static func wait(timeout: Double, _ condition: () -> Bool) async -> Bool {
        await Polling.until(timeout: timeout, condition)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Whether the newest accelerometer message received was sampled less than half a second ago.
    static func caughtUp(_ subscriber: PersistentSubscriber, _ device: String) -> Bool {
        caughtUp(subscriber.subscriber, topic: "motion/\(device)/accelerometer")
    }

    /// Whether the newest message on `topic` was sampled less than half a second ago. Reads only that one message
    /// and takes the time first: polled while thousands arrive, parsing them all would be the load that keeps a
    /// 200 Hz agent behind, and a parse longer than the half second could never pass.
    static func caughtUp(_ subscriber: CapturingSubscriber, topic: String) -> Bool {
        let now = Date().timeIntervalSince1970
        guard let last = subscriber.lastMessage(on: topic), let time = payloadJSON(last)["time"] as? Double else {
            return false
        }
        return now - time < 0.5
    }

    /// Whether every seq up to the newest received has arrived: the backlog a reconnect replays drains beside the
    /// live samples, so `caughtUp` can hold while older ones are still on their way. Waited for before a stop, so
    /// the stop's drain (3 s) is left only what was in flight at that moment — also on a loaded machine.
    static func drained(_ subscriber: PersistentSubscriber, _ device: String) -> Bool {
        let seqs = Set(subscriber.seqs(device))
        guard let newest = seqs.max() else { return false }
        return seqs.count == newest && seqs.min() == 1
    }

    /// Stops the agent with SIGTERM and waits for its goodbye; returns the goodbye's outbox object.
    static func stop(
        _ agent: AgentProcess,
        _ subscriber: PersistentSubscriber,
        device: String
    ) async throws -> [String: Any] {
        agent.runner.terminate()
        let exit = await agent.runner.waitForExit(timeout: 15)
        #expect(exit == 0, "agent log: \(agent.runner.standardError.suffix(3000))")
        #expect(await wait(timeout: 5) { subscriber.goodbye(device) != nil })
        let goodbye = try #require(
            subscriber.goodbye(device),
            "no goodbye status; agent log: \(agent.runner.standardError.suffix(3000))"
        )
        return try #require(goodbye["outbox"] as? [String: Any])
    }

    @Test func aTenSecondBrokerOutageLosesNothing() async throws {
        let broker = try await MosquittoBroker.started(options: .init(persistence: true))
        let device = "rel-outage"
        let subscriber = try await PersistentSubscriber(broker, device: device)
        let agent = try AgentProcess(config: Self.config(device: device, port: broker.port))
        #expect(await Self.wait(timeout: 15) { subscriber.seqs(device).count >= 400 })

        // SIGKILLed for 10 s mid-stream (the session survives in the persistence file, saved every second).
        await broker.kill()
        let beforeOutage = subscriber.seqs(device).count
        let birthsBefore = subscriber.births(device)
        try await Task.sleep(for: .seconds(10))
        // From launching the broker again, so the broker's own start-up is included.
        let back = ContinuousClock.now
        try await broker.start()
        try await subscriber.reconnect()
        // Reconnected: the agent's birth (sent after every CONNACK) arrived.
        #expect(await Self.wait(timeout: 10) { subscriber.births(device) > birthsBefore })
        let reconnected = ContinuousClock.now - back
        #expect(subscriber.seqs(device).count > beforeOutage)
        // 10 s at 200 Hz is a 2000-message backlog, drained at 500/s beside the live 200/s: recovered when
        // the newest message received is live again.
        #expect(await Self.wait(timeout: 30) { Self.caughtUp(subscriber, device) })
        let recovery = ContinuousClock.now - back
        #expect(await Self.wait(timeout: 30) { Self.drained(subscriber, device) }, "the backlog did not drain")
        let outbox = try await Self.stop(agent, subscriber, device: device)

        let seqs = subscriber.seqs(device)
        let appended = try #require(outbox["durableAppended"] as? Int)
        let unique = Set(seqs)
        let duplicates = seqs.count - unique.count
        let lost = (1...appended).filter { !unique.contains($0) }.count
        print(
            "reliability: broker outage 10 s at 200 Hz QoS 1 durable: sent \(appended), received \(seqs.count), unique \(unique.count), lost \(lost), duplicated \(duplicates), agent reconnected \(reconnected), caught up with live data \(recovery) (both from relaunching the broker)"
        )
        #expect(outbox["durableDepth"] as? Int == 0)
        #expect(outbox["durableDropped"] as? Int == 0)
        #expect(lost == 0)
        #expect(unique.count == appended && unique.min() == 1 && unique.max() == appended)
        // QoS 1 duplicates only come from resends of unacknowledged messages: at most one window's worth.
        #expect(duplicates <= 100)
        await subscriber.subscriber.close()
        await broker.stop()
    }

    @Test func messagesOfAKilledAgentArriveAfterItsRestart() async throws {
        let broker = try await MosquittoBroker.started(options: .init(persistence: true))
        let device = "rel-kill"
        let subscriber = try await PersistentSubscriber(broker, device: device)
        await broker.stop()

        // The broker is down: everything piles up in the durable log; then SIGKILL.
        let first = try AgentProcess(config: Self.config(device: device, port: broker.port))
        #expect(await first.runner.waitForOutput(containing: "connecting to mqtt", timeout: 15))
        try await Task.sleep(for: .seconds(3))
        first.runner.kill()
        _ = await first.runner.waitForExit(timeout: 5)
        // What the killed agent left on disk, read the way the next start reads it.
        let stateOutbox = first.directory + "/state/outbox"
        let left = try DurableLog(
            storage: SegmentFiles(folder: stateOutbox),
            maxBytes: 8_388_608,
            maxAgeSeconds: 3600,
            logger: Logger(label: "test")
        )
        let unsent = left.snapshot.depth
        left.close()
        #expect(unsent >= 300, "3 s at 200 Hz should have left hundreds of messages")

        try await broker.start()
        try await subscriber.reconnect()
        let second = try AgentProcess(
            config: Self.config(device: device, port: broker.port),
            directory: first.directory
        )
        // The first run's messages come first, in order, then the second run's (whose seq restarts at 1).
        #expect(await Self.wait(timeout: 20) { subscriber.seqs(device).count > unsent + 50 })
        _ = try await Self.stop(second, subscriber, device: device)
        let seqs = subscriber.seqs(device)
        let firstRun = Array(seqs.prefix(unsent))
        print(
            "reliability: agent SIGKILLed with the broker down: \(unsent) unsent on disk, first run's received \(firstRun.count), then the second run's from seq \(seqs.dropFirst(unsent).first ?? -1)"
        )
        #expect(firstRun == Array(1...unsent))
        #expect(seqs.dropFirst(unsent).first == 1)
        await subscriber.subscriber.close()
        await broker.stop()
    }

    @Test func aFullOutboxDropsTheOldestAndCountsExactly() async throws {
        let broker = try await MosquittoBroker.started(options: .init(persistence: true))
        let device = "rel-full"
        let subscriber = try await PersistentSubscriber(broker, device: device)
        await broker.stop()

        // 64 KiB hold about 300 messages: 6 s at 200 Hz (1200) overflow it.
        let agent = try AgentProcess(config: Self.config(device: device, port: broker.port, maxBytes: 65_536))
        #expect(await agent.runner.waitForOutput(containing: "connecting to mqtt", timeout: 15))
        try await Task.sleep(for: .seconds(6))
        try await broker.start()
        try await subscriber.reconnect()
        #expect(await Self.wait(timeout: 15) { Self.caughtUp(subscriber, device) })
        let outbox = try await Self.stop(agent, subscriber, device: device)

        let seqs = subscriber.seqs(device)
        let appended = try #require(outbox["durableAppended"] as? Int)
        let dropped = try #require(outbox["durableDropped"] as? Int)
        let delivered = Set(seqs).count
        print(
            "reliability: outbox bound 64 KiB, broker down 6 s: generated \(appended), delivered \(delivered), dropped \(dropped) (status)"
        )
        #expect(dropped > 0)
        #expect(outbox["durableDepth"] as? Int == 0)
        #expect(dropped == appended - delivered)
        // The oldest went: what arrived is the newest, without a gap — plus at most an in-flight window of older
        // ones that were already with the MQTT client (libmosquitto delivers those; they are not counted dropped).
        let unique = Set(seqs).sorted()
        var tailStart = unique.count - 1
        while tailStart > 0 && unique[tailStart - 1] == unique[tailStart] - 1 { tailStart -= 1 }
        #expect(unique.last == appended)
        #expect(
            tailStart <= 100,
            "\(tailStart) older messages arrived besides the newest run \(unique[tailStart])...\(appended)"
        )
        await subscriber.subscriber.close()
        await broker.stop()
    }

    @Test func aRefusedPasswordBacksOffAndSaysSoInTheHealthFile() async throws {
        let broker = try await MosquittoBroker.started(
            options: .init(allowAnonymous: false, users: ["rel-auth": "right"])
        )
        let device = "rel-auth"
        let directory = NSTemporaryDirectory() + "rel-auth-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "wrong\n".write(toFile: directory + "/password", atomically: true, encoding: .utf8)
        // Readable by its owner only: the agent refuses a password file others may read.
        chmod(directory + "/password", 0o600)
        let config = """
            device:
              id: \(device)
            agent:
              state_dir: state
            source:
              kind: simulated
            mqtt:
              host: 127.0.0.1
              port: \(broker.port)
              username: rel-auth
              password_file: password
              reconnect_min_delay: 0.2
              reconnect_max_delay: 1
            """
        let agent = try AgentProcess(config: config, directory: directory)
        let health = HealthFile(state: StateFiles(path: directory + "/state"))
        #expect(await Self.wait(timeout: 15) { health.read()?.state == .refused })
        // Even with reconnect_max_delay 1 s, a refusal waits at least 60 s: over 25 s, one attempt.
        try await Task.sleep(for: .seconds(25))
        // Every MQTT attempt ends in this line ("New connection from" also counts the fixture's TCP probe).
        let attempts = broker.log.components(separatedBy: "disconnected, not authorised").count - 1
        let document = try #require(health.read())
        print(
            "reliability: refused password: \(attempts) connection attempts in 25 s; health.json: \(document.state.rawValue), \(document.lastError ?? "")"
        )
        #expect(
            attempts == 1,
            "broker log: \(broker.log.split(separator: "\n").filter { $0.contains("onnect") }.joined(separator: "\n"))"
        )
        #expect(agent.runner.isRunning)
        #expect(document.state == .refused)
        #expect(document.consecutiveFailures == 1)
        #expect(document.lastError?.contains("not authorized") == true)
        #expect(document.lastError?.contains("mqtt.password_file") == true)
        let retryIn = (document.nextRetryTime ?? 0) - document.time
        #expect(retryIn >= 60)
        agent.runner.terminate()
        #expect(await agent.runner.waitForExit(timeout: 10) == 0)
        #expect(health.read()?.state == .stopped)
        await broker.stop()
    }
}
