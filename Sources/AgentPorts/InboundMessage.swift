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

    /// The bytes this message holds from the network (payload, topic and the MQTT 5 properties it carries): what
    /// the inbound queues' byte budgets count.
    public var byteCount: Int {
        payload.count + topic.utf8.count + (responseTopic?.utf8.count ?? 0) + (correlationData?.count ?? 0)
    }
}
