import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// Whoever received messages in a scenario: a `SimulatedTool`, or a persistent subscriber over its connections.
protocol DeliveryListener {
    var world: SimulationWorld { get }
    func messages(on topic: String) -> [InboundMessage]
}

extension SimulatedTool: DeliveryListener {}

/// A subscriber whose session (QoS 1 subscriptions and what it is owed) the broker keeps while it is away, and
/// which comes back at a moment the test chooses — the end-to-end tests' `reconnect()` after a broker restart —
/// instead of a tool's own retries every half second, which may come after the agent's.
final class DeliveryPersistentSubscriber: DeliveryListener {
    let world: SimulationWorld
    let broker: MemoryBroker
    let clientID: String
    /// One tool per connection, oldest first.
    private(set) var tools: [SimulatedTool]

    init(_ world: SimulationWorld, broker: MemoryBroker? = nil, clientID: String, subscribe filters: [String]) throws {
        self.world = world
        let broker = broker ?? world.brokers[0]
        self.broker = broker
        self.clientID = clientID
        tools = [try SimulatedTool(world, broker: broker, clientID: clientID, cleanSession: false, subscribe: filters)]
    }

    var current: SimulatedTool { tools[tools.count - 1] }

    var isConnected: Bool { current.isConnected }

    /// Gone without a word: its connection drops (if it still has one), it does not retry; the broker keeps the
    /// session.
    func leave() { current.client.kill() }

    /// Back at once, on the same session (after `leave`; the broker must be running).
    func comeBack() throws {
        tools.append(try SimulatedTool(world, broker: broker, clientID: clientID, cleanSession: false))
    }

    func messages(on topic: String) -> [InboundMessage] { tools.flatMap { $0.messages(on: topic) } }

    @discardableResult
    func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool { world.run(until: condition, timeout: timeout) }
}

/// What the delivery and reliability scenarios share: reading the stream samples and statuses a subscriber
/// received, and the usual moves of a scenario (stop the agent and take its goodbye, wait for live data).
enum DeliveryScenario {
    /// One JSON stream message as a subscriber got it.
    struct Sample: Equatable {
        var seq: Int
        /// The sample's wall-clock time (the virtual realtime clock).
        var time: Double
        /// The sample's monotonic timestamp (the virtual monotonic clock): unique per sample.
        var timestamp: Double
    }

    static func json(_ message: InboundMessage) -> [String: Any] { json(message.payload) }

    static func json(_ payload: [UInt8]) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]) ?? [:]
    }

    /// The samples of `topic` that `tool` received, in arrival order.
    static func samples(_ tool: some DeliveryListener, _ topic: String) -> [Sample] {
        tool.messages(on: topic).compactMap { message in
            let object = json(message)
            guard let seq = object["seq"] as? Int, let time = object["time"] as? Double,
                let timestamp = object["timestamp"] as? Double
            else { return nil }
            return Sample(seq: seq, time: time, timestamp: timestamp)
        }
    }

    static func seqs(_ tool: some DeliveryListener, _ topic: String) -> [Int] { samples(tool, topic).map(\.seq) }

    /// Every status document `tool` received for `device`, in arrival order.
    static func statuses(_ tool: some DeliveryListener, _ device: String) -> [AgentStatus] {
        tool.messages(on: TopicScheme(root: "motion/\(device)").status).compactMap {
            try? JSONDecoder().decode(AgentStatus.self, from: Data($0.payload))
        }
    }

    static func births(_ tool: some DeliveryListener, _ device: String) -> [AgentStatus] {
        statuses(tool, device).filter { $0.state == .online }
    }

    /// The goodbye (offline, reason shutdown) of the last clean stop.
    static func goodbye(_ tool: some DeliveryListener, _ device: String) -> AgentStatus? {
        statuses(tool, device).last { $0.state == .offline && $0.reason == "shutdown" }
    }

    /// SIGTERM, then the goodbye's outbox counters once it has arrived (nil: no goodbye within 30 simulated s). The
    /// agent must have ended cleanly (the end-to-end tests' exit status 0).
    static func stop(_ world: SimulationWorld, _ device: SimulatedAgent, _ tool: some DeliveryListener) -> OutboxStatus?
    {
        let before = statuses(tool, device.deviceID).count
        world.terminate(device)
        _ = world.run(
            until: {
                !device.isRunning
                    && statuses(tool, device.deviceID).dropFirst(before).contains { $0.reason == "shutdown" }
            },
            timeout: 30
        )
        #expect(endedCleanly(device), "the agent did not end cleanly: \(String(describing: device.process?.ended))")
        return goodbye(tool, device.deviceID)?.outbox
    }

    /// Whether the agent's last run ended without an error (SIGTERM's ordered shutdown: exit status 0).
    static func endedCleanly(_ device: SimulatedAgent) -> Bool {
        guard case .success = device.process?.ended else { return false }
        return true
    }

    /// Whether the newest sample received on `topic` was taken within the last `seconds` (the virtual source hands
    /// samples over in blocks of `VirtualSensorSource.blockSeconds`, so a live stream's newest sample is up to
    /// that old).
    static func caughtUp(
        _ tool: some DeliveryListener,
        _ topic: String,
        within seconds: Double = VirtualSensorSource.blockSeconds + 0.1
    ) -> Bool {
        guard let last = tool.messages(on: topic).last, let time = json(last)["time"] as? Double else { return false }
        return tool.world.clock.realtimeSeconds() - time < seconds
    }

    /// Whether every seq from 1 up to the newest received has arrived.
    static func drained(_ seqs: [Int]) -> Bool {
        let unique = Set(seqs)
        guard let newest = unique.max() else { return false }
        return unique.count == newest && unique.min() == 1
    }

    /// The seqs (of 1...newest) that never arrived.
    static func missing(_ seqs: [Int], upTo newest: Int) -> [Int] {
        let unique = Set(seqs)
        return newest > 0 ? (1...newest).filter { !unique.contains($0) } : []
    }
}
