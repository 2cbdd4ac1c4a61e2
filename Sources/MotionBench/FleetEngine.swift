import ArgumentParser

/// The broker `motion-bench fleet` runs its agents on (`--engine`): issue 28 asks for the same figures on one
/// mosquitto and on a three-node cluster of each clustered engine the fleet model is tested with (docs/fleet.md,
/// "Brokers that hold the fleet model").
enum FleetEngine: String, CaseIterable, ExpressibleByArgument {
    /// One mosquitto on loopback: the bench as it ran before clusters (and still runs by default).
    case mosquitto
    /// Three RabbitMQ 3.10 nodes: retained messages kept per node, so the operator tool reaches every node.
    case rabbitmq
    /// Three NATS 2.9 nodes: retained messages replicated by JetStream, so one node serves them all.
    case nats
}
