extension MosquittoBroker.Options {
    /// mosquitto.conf lines that bridge this broker to `central`: `topic` (a filter, e.g. `motion/#`) flows out
    /// at QoS 1 through a persistent bridge session, so what this broker accepted reaches `central` even when
    /// one of the two restarts in between (with `persistence` on, also when this broker restarts).
    package static func bridge(to central: MosquittoBroker, name: String, topic: String) -> [String] {
        [
            "connection \(name)",
            "address \(central.host):\(central.port)",
            "remote_clientid \(name)",
            "topic \(topic) out 1",
            "cleansession false",
            "bridge_protocol_version mqttv311",
            "restart_timeout 1 2",
            "start_type automatic",
        ]
    }
}
