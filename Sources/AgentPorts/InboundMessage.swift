/// A message received on a subscription. MQTT 5 request/response properties are carried when present.
package struct InboundMessage: Sendable, Hashable {
    package var topic: String
    package var payload: [UInt8]
    package var qos: Int
    package var retain: Bool
    package var responseTopic: String?
    package var correlationData: [UInt8]?

    package init(
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
    package var byteCount: Int {
        payload.count + topic.utf8.count + (responseTopic?.utf8.count ?? 0) + (correlationData?.count ?? 0)
    }
}
