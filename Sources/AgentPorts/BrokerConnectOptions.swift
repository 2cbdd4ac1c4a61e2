/// Everything needed for one connection attempt.
package struct BrokerConnectOptions: Sendable, Hashable {
    package var host: String
    package var port: Int
    package var clientID: String
    package var protocolVersion: MQTTProtocolVersion
    /// Seconds; libmosquitto refuses values below 5.
    package var keepaliveSeconds: Int
    /// `false` asks the broker to keep the session (subscriptions, QoS > 0 messages) across reconnects.
    package var cleanSession: Bool
    package var username: String?
    package var password: String?
    package var tls: BrokerTLS?
    package var will: BrokerWill?
    /// QoS > 0 messages in flight at once. Unlimited collapses QoS 1 throughput (1.9 k msg/s measured against
    /// 22–30 k msg/s with a window of 20–1000 on libmosquitto 2.0.11), so this is always bounded.
    package var maxInflightMessages: Int
    /// MQTT 5 Session Expiry Interval of a persistent session, seconds; `UInt32.max` never expires.
    package var sessionExpirySeconds: UInt32
    /// The largest MQTT packet this client takes from the broker, bytes; nil: MQTT's own limit. Sent in CONNECT as
    /// the MQTT 5 Maximum Packet Size, so the broker never sends a larger one (it discards it, MQTT 5
    /// §3.1.2.11.4); an inbound message larger than it all the same (a broker ignoring it, or MQTT 3.1.1, which
    /// has no such property) is dropped before its payload is copied, and counted (`InboundDrops.oversize`).
    package var maximumPacketSize: Int?

    package init(
        host: String,
        port: Int,
        clientID: String,
        protocolVersion: MQTTProtocolVersion = .v5,
        keepaliveSeconds: Int = 30,
        cleanSession: Bool = true,
        username: String? = nil,
        password: String? = nil,
        tls: BrokerTLS? = nil,
        will: BrokerWill? = nil,
        maxInflightMessages: Int = 100,
        sessionExpirySeconds: UInt32 = .max,
        maximumPacketSize: Int? = nil
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.protocolVersion = protocolVersion
        self.keepaliveSeconds = keepaliveSeconds
        self.cleanSession = cleanSession
        self.username = username
        self.password = password
        self.tls = tls
        self.will = will
        self.maxInflightMessages = maxInflightMessages
        self.sessionExpirySeconds = sessionExpirySeconds
        self.maximumPacketSize = maximumPacketSize
    }
}
