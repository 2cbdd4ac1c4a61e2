import AgentPorts
import Foundation
import TestSupport
import Testing

/// The durable 200 Hz QoS 1 stream against real brokers: its config, a persistent-session subscriber that counts
/// every `seq`, and the waits the end-to-end tests of real parts share (PowerCut, ControlFlood, Failover's RabbitMQ
/// cluster, IIO, InboundBytes). Its own tests — a broker outage, a killed agent, a full outbox, a refused account —
/// check the outbox's logic, not real parts: they run on virtual time in
/// AgentSimulationTests/ReliabilitySimulationTests (issue 40).
struct ReliabilityEndToEndTests {
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
}
