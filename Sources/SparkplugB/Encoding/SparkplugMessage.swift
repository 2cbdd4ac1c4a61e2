/// A message the edge node publishes: its topic and its body. Bodies are finished by `SparkplugStamp` at
/// publication (payload timestamp and `seq`), except the NDEATH will, which the broker publishes for us and is
/// therefore complete. Sparkplug messages are QoS 0 and not retained (6.4.17–6.4.21); the will is QoS 1.
package struct SparkplugMessage: Sendable, Equatable {
    package var topic: SparkplugTopic
    package var body: [UInt8]

    package init(topic: SparkplugTopic, body: [UInt8]) {
        self.topic = topic
        self.body = body
    }

    package var type: SparkplugMessageType { topic.messageType }
}
