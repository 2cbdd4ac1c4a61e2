import AgentPorts
import Foundation
import MemoryBroker
import MotionWire

/// A client for scenario tests in the simulation: what a subscriber, `mosquitto_pub` or `motion-agent ctl` does
/// against a real broker, on the world's network and clock. A task on the world's executor reads its events:
/// it keeps every message it receives and, when the connection is lost, connects again half a second later (and
/// subscribes again, in a clean session), as a subscriber that reconnects does. Its waits run the world until a
/// condition holds or a simulated deadline passes — a test on virtual time cannot time out on a loaded host.
package final class SimulatedTool: @unchecked Sendable {
    package let world: SimulationWorld
    package let broker: MemoryBroker
    package let client: MemoryBrokerClient
    package let clientID: String
    private let options: BrokerConnectOptions
    private var received: [InboundMessage] = []
    private var filters: [(filters: [String], qos: Int)] = []
    private var connections = 0
    private var commandNumber = 0

    /// Connects `clientID` to `broker` and waits (simulated) for the connection.
    package init(
        _ world: SimulationWorld,
        broker: MemoryBroker? = nil,
        clientID: String = "tool",
        protocolVersion: MQTTProtocolVersion = .v5,
        cleanSession: Bool = true,
        subscribe filters: [String] = []
    ) throws {
        self.world = world
        let broker = broker ?? world.brokers[0]
        self.broker = broker
        self.clientID = clientID
        client = broker.makeClient()
        options = broker.connectOptions(
            clientID: clientID,
            protocolVersion: protocolVersion,
            cleanSession: cleanSession
        )
        try client.connect(options)
        world.executor.run {
            Task(executorPreference: world.executor) { [self] in
                for await event in client.events { await handle(event) }
            }
        }
        guard waitUntil(timeout: 10, { self.isConnected }) else {
            throw AgentError("the tool \(clientID) did not connect to \(broker.name) within 10 simulated seconds")
        }
        if !filters.isEmpty { try subscribe(filters) }
    }

    package var isConnected: Bool {
        drain()
        return client.isConnected
    }

    /// Subscribes (QoS 1) and lets the retained messages arrive.
    package func subscribe(_ filters: [String], qos: Int = 1) throws {
        self.filters.append((filters, qos))
        try client.subscribe(filters, qos: qos)
        world.run(for: 0.01)
        drain()
    }

    /// Every message received so far, oldest first.
    package var messages: [InboundMessage] {
        drain()
        return received
    }

    /// The messages received on `topic`.
    package func messages(on topic: String) -> [InboundMessage] { messages.filter { $0.topic == topic } }

    /// Forgets what was received so far.
    package func clear() {
        drain()
        received.removeAll()
    }

    /// Publishes and lets the world take it.
    package func publish(_ topic: String, _ payload: String, qos: Int = 1, retain: Bool = false) throws {
        try publish(topic, Array(payload.utf8), qos: qos, retain: retain)
    }

    package func publish(_ topic: String, _ payload: [UInt8], qos: Int = 1, retain: Bool = false) throws {
        _ = try payload.withUnsafeBytes { try client.publish(topic: topic, payload: $0, qos: qos, retain: retain) }
        world.run(for: 0.01)
    }

    /// Sends `json` (a command object, or an envelope) on `topic` with `motion-agent ctl`'s response topic and
    /// correlation data, and returns the replies that arrive within `timeout` simulated seconds (`expect` of
    /// them: one for a device, one per member for a group or the fleet).
    package func command(
        _ topic: String,
        _ json: String,
        expect: Int = 1,
        timeout: Double = 10
    ) throws -> [ControlReply] {
        commandNumber += 1
        let correlation = Array("\(clientID)-\(commandNumber)".utf8)
        let responseTopic = TopicScheme.operatorReply(clientID: clientID)
        try client.subscribe([responseTopic + "/+"], qos: 1)
        world.run(for: 0.01)
        let before = messages.count
        try client.publishRequest(
            topic: topic,
            payload: Array(json.utf8),
            responseTopic: responseTopic,
            correlationData: correlation
        )
        func replies() -> [InboundMessage] {
            messages[before...].filter { $0.topic.hasPrefix(responseTopic + "/") && $0.correlationData == correlation }
        }
        _ = waitUntil(timeout: timeout) { replies().count >= expect }
        return replies().compactMap { try? JSONDecoder().decode(ControlReply.self, from: Data($0.payload)) }
    }

    /// The message the broker retains on `topic`.
    package func retained(_ topic: String) -> [UInt8]? { broker.retainedMessage(topic: topic)?.payload }

    /// The retained status of `device` (default topic root).
    package func status(_ device: String) -> AgentStatus? {
        retained(TopicScheme(root: "motion/\(device)").status).flatMap {
            try? JSONDecoder().decode(AgentStatus.self, from: Data($0))
        }
    }

    /// The retained configuration account of `device`.
    package func configuration(_ device: String) -> ConfigurationStatus? {
        retained(TopicScheme(root: "motion/\(device)").configuration).flatMap {
            try? JSONDecoder().decode(ConfigurationStatus.self, from: Data($0))
        }
    }

    /// Runs the world until `condition` holds, at most `timeout` simulated seconds; returns whether it held.
    @discardableResult
    package func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
        world.run(until: condition, timeout: timeout)
    }

    private func handle(_ event: BrokerEvent) async {
        switch event {
        case .message(let message): received.append(message)
        case .connected(let sessionPresent):
            connections += 1
            if !sessionPresent {
                for (filters, qos) in filters { try? client.subscribe(filters, qos: qos) }
            }
        case .disconnected, .connectFailed:
            try? await world.clock.sleep(seconds: 0.5)
            try? client.connect(options)
        case .serverReference: break
        }
    }

    /// The world runs the tool's task; nothing to take here.
    private func drain() {}
}

extension SimulationWorld {
    /// Runs until `condition` holds (checked whenever time moves), at most `timeout` simulated seconds; returns
    /// whether it held.
    @discardableResult
    package func run(until condition: () -> Bool, timeout: Double, step: Double = 0.05) -> Bool {
        let deadline = now + timeout
        while now < deadline {
            if condition() { return true }
            run(until: min(deadline, now + step))
        }
        return condition()
    }
}
