import AgentPorts

/// A client's session at a broker: subscriptions and the QoS > 0 messages it is owed, living past its
/// connection when it is persistent.
struct BrokerSession: Sendable {
    struct Subscription {
        var filter: String
        var qos: Int
        /// Without `+` or `#`: matched by equality (most of a device's filters are its own topics).
        let literal: Bool

        init(filter: String, qos: Int) {
            self.filter = filter
            self.qos = qos
            literal = !filter.utf8.contains { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }
        }

        func matches(_ topic: String) -> Bool {
            literal ? filter == topic : TopicFilter.matches(filter: filter, topic: topic)
        }
    }

    /// A message the broker owes the client: in flight (sent, awaiting PUBACK) or queued.
    struct Outgoing {
        var message: StoredMessage
        var qos: Int
        var retain: Bool
        var messageID: Int32
    }

    let clientID: String
    var subscriptions: [Subscription] = []
    var inflight: [Outgoing] = []
    var queued = FIFO<Outgoing>()
    var lastMessageID: UInt16 = 0
    /// The connection it is attached to; nil while the client is offline.
    var connection: Int?
    /// Seconds the session outlives its connection: 0 ends it with the connection (clean session), `.max` never.
    var expirySeconds: UInt32
    var disconnectedAt: Double?
    var protocolVersion: MQTTProtocolVersion
    /// The client's MQTT 5 Maximum Packet Size (nil: none, and always nil on MQTT 3.1.1).
    var maximumPacketSize: Int?
    var will: BrokerWill?
    /// In-flight slots lost on this connection to QoS 1 messages dropped as too large (mosquitto 2.0.11).
    var leakedWindow = 0

    /// Whether an offline session has outlived its expiry at `now`.
    func hasExpired(at now: Double) -> Bool {
        guard connection == nil, let since = disconnectedAt else { return false }
        if expirySeconds == .max { return false }
        return now >= since + Double(expirySeconds)
    }

    mutating func nextMessageID() -> Int32 {
        lastMessageID &+= 1
        if lastMessageID == 0 { lastMessageID = 1 }
        return Int32(lastMessageID)
    }
}
