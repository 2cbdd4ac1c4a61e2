/// MQTT protocol level spoken to the broker.
public enum MQTTProtocolVersion: String, Sendable, Hashable, Codable, CaseIterable {
    case v5
    case v311
}

/// TLS settings; `nil` paths mean "not used". TLS 1.2 is the minimum version offered.
public struct BrokerTLS: Sendable, Hashable {
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?

    public init(caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
    }
}

/// The last will the broker publishes when the connection dies without a clean DISCONNECT.
public struct BrokerWill: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: Int, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}

/// Everything needed for one connection attempt.
public struct BrokerConnectOptions: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var clientID: String
    public var protocolVersion: MQTTProtocolVersion
    /// Seconds; libmosquitto refuses values below 5.
    public var keepaliveSeconds: Int
    /// `false` asks the broker to keep the session (subscriptions, QoS > 0 messages) across reconnects.
    public var cleanSession: Bool
    public var username: String?
    public var password: String?
    public var tls: BrokerTLS?
    public var will: BrokerWill?
    /// QoS > 0 messages in flight at once. Unlimited collapses QoS 1 throughput (1.9 k msg/s measured against
    /// 22–30 k msg/s with a window of 20–1000 on libmosquitto 2.0.11), so this is always bounded.
    public var maxInflightMessages: Int

    public init(
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
        maxInflightMessages: Int = 100
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
    }
}

/// A message received on a subscription. MQTT 5 request/response properties are carried when present.
public struct InboundMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool
    public var responseTopic: String?
    public var correlationData: [UInt8]?

    public init(
        topic: String,
        payload: [UInt8],
        qos: Int,
        retain: Bool,
        responseTopic: String? = nil,
        correlationData: [UInt8]? = nil
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.responseTopic = responseTopic
        self.correlationData = correlationData
    }
}

/// What happens on the connection, in order, as the client's network thread sees it.
public enum BrokerEvent: Sendable, Hashable {
    /// CONNACK accepted.
    case connected(sessionPresent: Bool)
    /// The attempt failed (TCP, TLS or a CONNACK refusal). `code` is the MQTT reason code or the library's
    /// error number; `reason` is a sentence for the log. `isAuthorization` marks refused credentials or
    /// client ids, which call for a long back-off.
    case connectFailed(code: Int, reason: String, isAuthorization: Bool)
    /// An established connection ended; `expected` when we asked for it.
    case disconnected(reason: String, expected: Bool)
    /// A message arrived on a subscription.
    case message(InboundMessage)
    /// The broker acknowledged the QoS > 0 message with this id (PUBACK / PUBCOMP). QoS 0 messages have no
    /// acknowledgement and produce no event.
    case delivered(messageID: Int32)
}

/// An error from the MQTT client, with the library's text and what to do about it.
public struct BrokerError: Error, Sendable, Hashable, CustomStringConvertible {
    public var operation: String
    public var code: Int
    public var message: String
    /// The message itself can never be sent (bad topic, payload too large, QoS the broker refuses): retrying
    /// is pointless, so the outbox drops and counts it instead of letting it block the queue. The client
    /// decides, since only it knows its library's error codes.
    public var isPermanent: Bool

    public init(operation: String, code: Int, message: String, isPermanent: Bool = false) {
        self.operation = operation
        self.code = code
        self.message = message
        self.isPermanent = isPermanent
    }

    public var description: String { "\(operation) failed: \(message)" }
}

/// The MQTT port. One client per agent; one network thread inside it. Reconnecting is the caller's
/// decision (the agent owns the back-off), so a lost connection stays lost until `connect` is called again.
public protocol BrokerClient: AnyObject, Sendable {
    /// Every connection event and inbound message, in the order the network thread saw them.
    var events: AsyncStream<BrokerEvent> { get }
    /// Whether the connection is up (CONNACK accepted and not yet lost).
    var isConnected: Bool { get }
    /// Starts one connection attempt and returns at once; the outcome arrives on `events`.
    func connect(_ options: BrokerConnectOptions) throws(BrokerError)
    /// Sends DISCONNECT after flushing what is queued (bounded by `timeout` seconds) and stops the thread.
    func disconnect(flushTimeout: Double) async
    /// Queues a message without waiting on the network; returns its message id.
    func publish(
        topic: String,
        payload: UnsafeRawBufferPointer,
        qos: Int,
        retain: Bool
    ) throws(BrokerError) -> Int32
    /// Publishes an MQTT 5 response (with correlation data) — or a plain message on 3.1.1.
    func publishResponse(
        topic: String,
        payload: [UInt8],
        correlationData: [UInt8]?
    ) throws(BrokerError)
    func subscribe(_ filters: [String], qos: Int) throws(BrokerError)
}
