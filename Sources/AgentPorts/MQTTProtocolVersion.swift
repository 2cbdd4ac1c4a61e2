/// MQTT protocol level spoken to the broker.
package enum MQTTProtocolVersion: String, Sendable, Hashable, Codable, CaseIterable {
    case v5
    case v311
}
