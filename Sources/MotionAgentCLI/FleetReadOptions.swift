import ArgumentParser

/// How the `fleet` commands subscribe to what they read (their own: `ctl`, `sub` and `watch` subscribe otherwise).
struct FleetReadOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The QoS of what the command subscribes to: 1 (the default) or 0.",
            discussion:
                "0 on NATS: there every QoS 1 filter is a replicated JetStream consumer, created at SUBSCRIBE and deleted when the command exits, and a deletion that times out holds the node's traffic for seconds. Keep 1 on mosquitto: it drops QoS 0 messages beyond max_queued_messages, so a large fleet's retained statuses could go missing (docs/fleet.md)."
        )
    )
    var readQos = 1

    func validate() throws {
        guard (0...1).contains(readQos) else {
            throw ValidationError("--read-qos \(readQos) is not 0 or 1: 1 on mosquitto and RabbitMQ, 0 on NATS")
        }
    }
}
