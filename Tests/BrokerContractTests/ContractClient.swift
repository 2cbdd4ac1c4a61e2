import AgentPorts
import Synchronization
import TestSupport

/// A client of either broker (MosquittoClient or MemoryBrokerClient) with everything it reported: its events, in
/// order, and the message ids its acknowledgement handler received.
final class ContractClient: Sendable {
    let client: any BrokerClient
    /// The client id it connects with.
    let name: String
    /// For mosquitto: the proxy standing in for its network.
    let proxy: LoopbackProxy?
    let acknowledgements = AcknowledgementRecorder()
    private let recorded = Recorded()
    private let consumer: Task<Void, Never>
    private let requester: @Sendable (String, [UInt8], String, [UInt8]) throws(BrokerError) -> Void
    private let queued: @Sendable () -> Int

    private final class Recorded: Sendable {
        let events = Mutex<[BrokerEvent]>([])
    }

    init(
        _ client: any BrokerClient,
        name: String,
        proxy: LoopbackProxy?,
        queuedMessageCount: @escaping @Sendable () -> Int,
        publishRequest: @escaping @Sendable (String, [UInt8], String, [UInt8]) throws(BrokerError) -> Void
    ) {
        queued = queuedMessageCount
        self.client = client
        self.name = name
        self.proxy = proxy
        requester = publishRequest
        client.setAcknowledgementHandler(acknowledgements)
        let recorded = self.recorded
        let stream = client.events
        consumer = Task {
            for await event in stream { recorded.events.withLock { $0.append(event) } }
        }
    }

    deinit { consumer.cancel() }

    var events: [BrokerEvent] { recorded.events.withLock { $0 } }

    /// Messages handed to the client and not yet written (QoS 0) or acknowledged (QoS > 0).
    var queuedMessageCount: Int { queued() }

    /// Connection events (no messages), in order.
    var connectionEvents: [BrokerEvent] {
        events.filter {
            if case .message = $0 { return false }
            return true
        }
    }

    /// The terminal events so far (`.connectFailed`, `.disconnected`).
    var terminalEvents: [BrokerEvent] {
        events.filter {
            switch $0 {
            case .connectFailed, .disconnected: true
            default: false
            }
        }
    }

    /// Messages received, the harness's probes left out.
    var messages: [InboundMessage] {
        events.compactMap {
            if case .message(let message) = $0, !message.topic.hasPrefix(ContractClient.probePrefix) { return message }
            return nil
        }
    }

    func messages(under prefix: String) -> [InboundMessage] {
        messages.filter { $0.topic.hasPrefix(prefix) }
    }

    func hasMessage(topic: String) -> Bool {
        events.contains {
            if case .message(let message) = $0 { return message.topic == topic }
            return false
        }
    }

    /// Where this client's probes go (`ContractBroker.sync`).
    static let probePrefix = "probe/"
    var probeFilter: String { "\(Self.probePrefix)\(name)/#" }

    @discardableResult
    func publish(
        _ topic: String,
        _ text: String,
        qos: Int,
        retain: Bool = false,
        expirySeconds: UInt32 = 0
    ) throws -> Int32 {
        try publish(topic, Array(text.utf8), qos: qos, retain: retain, expirySeconds: expirySeconds)
    }

    @discardableResult
    func publish(
        _ topic: String,
        _ payload: [UInt8],
        qos: Int,
        retain: Bool = false,
        expirySeconds: UInt32 = 0
    ) throws -> Int32 {
        try payload.withUnsafeBytes {
            try client.publish(topic: topic, payload: $0, qos: qos, retain: retain, expirySeconds: expirySeconds)
        }
    }

    func publishRequest(_ topic: String, _ text: String, responseTopic: String, correlationData: [UInt8]) throws {
        try requester(topic, Array(text.utf8), responseTopic, correlationData)
    }
}

extension Array where Element == InboundMessage {
    var texts: [String] { map { String(decoding: $0.payload, as: UTF8.self) } }
    var topics: [String] { map(\.topic) }
}
