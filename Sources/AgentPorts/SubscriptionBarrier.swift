/// Knowing when a subscription took effect and every retained message it brings has arrived: subscribe to the
/// filters and to a barrier topic in one SUBSCRIBE, then publish a fresh token on the barrier topic. A broker
/// handles one client's packets in order, so it sends the SUBSCRIBE's retained messages before it routes the
/// token back: when the token returns, the retained messages are all in (MQTT 5 §4.6; mosquitto, RabbitMQ and
/// NATS behave so). The agent's desired-state snapshot, `motion-agent fleet` and the test harness use it.
package struct SubscriptionBarrier: Sendable, Equatable {
    /// A topic the client may both subscribe and publish to (its ACL allows it).
    package let topic: String
    /// Random per barrier, so a late token of an earlier barrier proves nothing about this one.
    package let token: [UInt8]

    package init(topic: String) {
        self.topic = topic
        token = Array(String(UInt64.random(in: 1...UInt64.max), radix: 36).utf8)
    }

    /// Subscribes `client` to `filters` and the barrier topic, then publishes the token (QoS 1, not retained).
    package func subscribe(_ client: any BrokerClient, to filters: [String], qos: Int) throws {
        try client.subscribe(filters + [topic], qos: qos)
        try publish(on: client)
    }

    /// Publishes the token again: for a subscription made earlier on this connection.
    package func publish(on client: any BrokerClient) throws {
        _ = try token.withUnsafeBytes { try client.publish(topic: topic, payload: $0, qos: 1, retain: false) }
    }

    /// Whether `message` is this barrier's token coming back.
    package func isReturn(of message: InboundMessage) -> Bool {
        message.topic == topic && message.payload == token
    }
}
