import AgentPorts
import Foundation
import Harness

#if canImport(Glibc)
import Glibc
#endif

/// The broker or brokers of one `motion-bench fleet` run (`--engine`): one mosquitto on loopback, or a three-node
/// NATS or RabbitMQ cluster from the Harness. Says where each agent connects, how the bench's subscribers and the
/// operator tool reach every node, and which processes are the brokers' for their CPU and memory.
final class FleetBrokers {
    enum Running {
        case mosquitto(MosquittoBroker)
        case cluster(any BrokerCluster)
    }

    let engine: FleetEngine
    let running: Running
    /// The agents' state directories and the bench's files (removed with the broker's or by `withStarted`).
    let directory: String

    private init(engine: FleetEngine, running: Running, directory: String) {
        self.engine = engine
        self.running = running
        self.directory = directory
    }

    /// Starts the engine's broker (a cluster: every node taking MQTT clients), runs `body`, and stops it, also
    /// when `body` throws.
    static func withStarted<Result>(
        _ engine: FleetEngine,
        _ body: (FleetBrokers) async throws -> Result
    ) async throws -> Result {
        let cluster: any BrokerCluster
        switch engine {
        case .mosquitto:
            return try await MosquittoBroker.withStarted(options: .benchmark(tcpNoDelay: true)) { broker in
                try await body(FleetBrokers(engine: engine, running: .mosquitto(broker), directory: broker.directory))
            }
        case .nats: cluster = try await NATSCluster.started(nodeCount: 3)
        case .rabbitmq: cluster = try await RabbitMQCluster.started(nodeCount: 3)
        }
        let directory = NSTemporaryDirectory() + "motion-bench-fleet-\(UUID().uuidString.prefix(8))"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let result = try await body(FleetBrokers(engine: engine, running: .cluster(cluster), directory: directory))
            await cluster.stop()
            keepLogs(cluster)
            try? FileManager.default.removeItem(atPath: directory)
            return result
        } catch {
            await cluster.stop()
            keepLogs(cluster)
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// Copies every node's log to /tmp before the cluster's directory goes, for a post-mortem of a run's figures.
    private static func keepLogs(_ cluster: any BrokerCluster) {
        for node in cluster.endpoints.indices {
            let path = "/tmp/motion-bench-fleet-node\(node + 1)-\(getpid()).log"
            guard (try? cluster.log(node).write(toFile: path, atomically: true, encoding: .utf8)) != nil else {
                continue
            }
            FileHandle.standardError.write(Data("\(cluster.engine) node \(node + 1)'s log: \(path)\n".utf8))
        }
    }

    /// Each node's log length in lines now, to count what it logs during a run (`logRow`).
    var logMarks: [Int] {
        guard case .cluster(let cluster) = running else { return [] }
        return cluster.endpoints.indices.map { cluster.log($0).split(separator: "\n").count }
    }

    /// What the nodes logged since `marks`: warnings and errors (NATS's "system account not setup" advisory
    /// warning, logged at every consumer made or removed, left out); on NATS the JetStream stalls — a client whose
    /// read loop waited on a JetStream request (storing a QoS 1 or retained message), requests that timed out —
    /// and the stream and metadata leader elections, during which a stream holds its writes (NATS's election
    /// timeout is 4–9 s): what a stall shared by every agent in the figures comes from. Nil on one mosquitto.
    func logRow(since marks: [Int]) -> BenchRow? {
        guard case .cluster(let cluster) = running else { return nil }
        var counts = (warnings: 0, errors: 0, slowReads: 0, timeouts: 0, elections: 0)
        for node in cluster.endpoints.indices {
            for line in cluster.log(node).split(separator: "\n").dropFirst(marks[node]) {
                if line.contains("[WRN]") && !line.contains("system account not setup") || line.contains("[warning]") {
                    counts.warnings += 1
                }
                if line.contains("[ERR]") || line.contains("[error]") { counts.errors += 1 }
                if line.contains("Readloop processing time") { counts.slowReads += 1 }
                if line.contains("timeout for request") { counts.timeouts += 1 }
                if line.contains("new stream leader") || line.contains("metadata leader") { counts.elections += 1 }
            }
        }
        if engine == .nats {
            return BenchRow(
                name: "node logs: warnings, errors; slow read loops, JetStream timeouts, stream leader elections",
                value:
                    "\(counts.warnings), \(counts.errors); \(counts.slowReads), \(counts.timeouts), \(counts.elections)"
            )
        }
        return BenchRow(name: "node logs: warnings, errors", value: "\(counts.warnings), \(counts.errors)")
    }

    /// What the bench's table title says the agents ran on.
    var title: String {
        switch running {
        case .mosquitto: "one mosquitto on loopback"
        case .cluster(let cluster): "a \(cluster.endpoints.count)-node \(cluster.engine) cluster on loopback"
        }
    }

    /// The brokers' name in a row: one process, or the nodes summed.
    var name: String {
        switch running {
        case .mosquitto: "mosquitto"
        case .cluster(let cluster): "\(cluster.engine) nodes summed"
        }
    }

    var nodeCount: Int {
        switch running {
        case .mosquitto: 1
        case .cluster(let cluster): cluster.endpoints.count
        }
    }

    /// Every node's `host:port`.
    var endpoints: [String] {
        switch running {
        case .mosquitto(let broker): ["\(broker.host):\(broker.port)"]
        case .cluster(let cluster): cluster.endpoints
        }
    }

    /// Whether a retained message stored through one node is served by all (one mosquitto: trivially).
    var replicatesRetainedMessages: Bool {
        switch running {
        case .mosquitto: true
        case .cluster(let cluster): cluster.replicatesRetainedMessages
        }
    }

    /// config.yaml's `mqtt:` lines of the `index`th agent. On a cluster each agent lists every node, the list
    /// rotated by its index, the way a fleet's inventory would spread its devices; the agent itself starts at a
    /// random entry of the list (ConnectionSupervisorService), so the rotation decides its failover order and the
    /// spread is the agent's draw — the bench reports the spread it got. MQTT 3.1.1: neither engine speaks 5.
    func mqttLines(agent index: Int) -> [String] {
        let reconnect = ["reconnect_min_delay: 0.2", "reconnect_max_delay: 2"]
        switch running {
        case .mosquitto(let broker):
            return ["host: \(broker.host)", "port: \(broker.port)"] + reconnect
        case .cluster(let cluster):
            let nodes = cluster.endpoints.indices.map { cluster.endpoints[(index + $0) % cluster.endpoints.count] }
            return ["servers: [\(nodes.joined(separator: ", "))]", "protocol: v311"] + reconnect
        }
    }

    /// A bench client's options for `node`.
    func connectOptions(node: Int, clientID: String) -> BrokerConnectOptions {
        switch running {
        case .mosquitto(let broker):
            return broker.connectOptions(clientID: clientID)
        case .cluster(let cluster):
            return BrokerConnectOptions(
                host: "127.0.0.1",
                port: cluster.port(node),
                clientID: clientID,
                protocolVersion: .v311
            )
        }
    }

    /// One subscriber per node to every status (and, on a cluster, to the fleet document, whose first arrival
    /// marks the publish: the operator tool reads the nodes before it publishes, which is not convergence). Every
    /// node routes every live message to its subscribers, so each subscriber hears every status; reading them all
    /// keeps one slow node's delivery out of the figures, and a node that fails to deliver shows in the board.
    func statusSubscribers() async throws -> [CapturingSubscriber] {
        switch running {
        case .mosquitto(let broker):
            return [
                try await CapturingSubscriber(broker: broker, filters: ["motion/+/status"], eventBacklogLimit: 1 << 20)
            ]
        case .cluster:
            var subscribers: [CapturingSubscriber] = []
            for node in 0..<nodeCount {
                subscribers.append(
                    try await CapturingSubscriber(
                        options: connectOptions(node: node, clientID: "bench-fleet-board-\(node)"),
                        filters: ["motion/+/status", TopicScheme.fleetDesired],
                        timeout: 30,
                        eventBacklogLimit: 1 << 20
                    )
                )
            }
            return subscribers
        }
    }

    /// The broker options of the operator's `motion-agent fleet` commands: mosquitto by host and port; NATS
    /// through one node (it serves every retained message from each); RabbitMQ through every node (docs/fleet.md).
    var operatorArguments: [String] {
        switch running {
        case .mosquitto(let broker):
            return ["--host", broker.host, "--port", "\(broker.port)"]
        case .cluster(let cluster):
            let nodes = cluster.replicatesRetainedMessages ? [cluster.endpoints[0]] : cluster.endpoints
            return nodes.flatMap { ["--server", $0] } + [
                "--protocol", "v311", "--read-qos", "\(cluster.operatorReadQoS)",
            ]
        }
    }

    /// The brokers' processes now: mosquitto, or every node's process tree (RabbitMQ's script, its Erlang VM and
    /// the VM's helpers).
    var processIdentifiers: [Int32] {
        switch running {
        case .mosquitto(let broker): return broker.processIdentifier.map { [$0] } ?? []
        case .cluster(let cluster): return ProcessStatistics.tree(cluster.processIdentifiers)
        }
    }
}
