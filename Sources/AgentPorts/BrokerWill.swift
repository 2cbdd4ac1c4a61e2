/// The last will the broker publishes when the connection dies without a clean DISCONNECT.
package struct BrokerWill: Sendable, Hashable {
    package var topic: String
    package var payload: [UInt8]
    package var qos: Int
    package var retain: Bool

    package init(topic: String, payload: [UInt8], qos: Int, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
