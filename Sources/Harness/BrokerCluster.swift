/// A broker cluster of several nodes on this host, for the cluster tests and `motion-bench fleet --engine`: a
/// RabbitMQ cluster (retained messages kept per node) or a NATS cluster (retained messages replicated by
/// JetStream). Both speak MQTT 3.1.1 only; each node has its own MQTT port on 127.0.0.1.
package protocol BrokerCluster: AnyObject, Sendable {
    /// The engine and its version, as the tests' and the bench's output name it (`RabbitMQ 3.10`, `NATS 2.9`).
    var engine: String { get }
    /// Every node's MQTT endpoint, `127.0.0.1:port`, in node order.
    var endpoints: [String] { get }
    /// Whether the engine serves retained messages stored through one node from every other node. When it does
    /// not (RabbitMQ), an operator reaches every node to publish or read desired documents (docs/fleet.md).
    var replicatesRetainedMessages: Bool { get }
    /// The QoS operator tools read at (`motion-agent fleet --read-qos`): 0 where a QoS 1 subscription is a
    /// replicated consumer the engine creates and deletes with each connection (NATS), 1 elsewhere.
    var operatorReadQoS: Int { get }
    func isRunning(_ node: Int) -> Bool
    /// The server process of each running node, in node order: the root of the node's process tree (for
    /// RabbitMQ the `rabbitmq-server` script, whose child is the Erlang VM), for the bench's CPU and memory.
    var processIdentifiers: [Int32] { get }
    /// Stops one node as an operator would; its clients lose their connection.
    func stop(node: Int) async
    /// Starts a stopped node again with its data, and waits until it takes MQTT clients.
    func start(node: Int) async throws
    /// Stops every node and removes what the cluster wrote.
    func stop() async
    /// The node's log, for a failure's message.
    func log(_ node: Int) -> String
}

extension BrokerCluster {
    /// The MQTT port of `node`.
    package func port(_ node: Int) -> Int {
        Int(endpoints[node].split(separator: ":").last ?? "") ?? 0
    }
}
