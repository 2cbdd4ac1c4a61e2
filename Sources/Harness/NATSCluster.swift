import AgentPorts
import Foundation
import MosquittoTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real NATS cluster (Debian's nats-server 2.9) of `nodeCount` nodes on one host: each node listens on
/// 127.0.0.1 only, on free ports (NATS clients, cluster routes, MQTT), with JetStream in a private directory.
/// Its MQTT listener keeps retained messages in a JetStream stream replicated to every node (`$MQTT_rmsgs`,
/// R3 on three nodes), so a document retained through one node is served by all: the engine the fleet model
/// needs no per-node publishing on. A missing nats-server is an error, not a skip: scripts/test.sh installs it.
package final class NATSCluster: BrokerCluster {
    package static let server = "/usr/sbin/nats-server"

    package struct Node: Sendable {
        package let name: String
        package let clientPort: Int
        package let routePort: Int
        package let mqttPort: Int
        package let directory: String
        package var endpoint: String { "127.0.0.1:\(mqttPort)" }
    }

    package let nodes: [Node]
    /// Configuration, JetStream stores and logs of every node.
    package let directory: String
    package var engine: String { "NATS 2.9" }
    package var endpoints: [String] { nodes.map(\.endpoint) }
    package var replicatesRetainedMessages: Bool { true }
    package var operatorReadQoS: Int { 0 }
    private let processes = NodeProcesses()

    package init(nodeCount: Int = 3) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.server) else {
            throw MosquittoBroker.FixtureError(
                description: "nats-server is not installed: run `apt-get install -y nats-server` (scripts/test.sh does)"
            )
        }
        let template = NSTemporaryDirectory() + "nats-test-" + String(repeating: "X", count: 6)
        var path = Array(template.utf8CString)
        guard mkdtemp(&path) != nil else {
            throw MosquittoBroker.FixtureError(description: "mkdtemp \(template) failed")
        }
        directory = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var ports = Set<Int>()
        func freshPort() -> Int {
            while true {
                let port = FreePort.find()
                if ports.insert(port).inserted { return port }
            }
        }
        let base = directory
        nodes = (1...max(1, nodeCount)).map { index in
            Node(
                name: "motion-n\(index)",
                clientPort: freshPort(),
                routePort: freshPort(),
                mqttPort: freshPort(),
                directory: "\(base)/node\(index)"
            )
        }
        for node in nodes { try writeConfiguration(node) }
    }

    /// Starts every node at once (NATS forms its cluster in seconds, unlike RabbitMQ) and waits, bounded by
    /// `timeout` seconds, until each one's MQTT listener accepts a connection — which needs the JetStream
    /// meta leader and the MQTT streams, replicated across the nodes.
    package static func started(nodeCount: Int = 3, timeout: Double = 120) async throws -> NATSCluster {
        let cluster = try NATSCluster(nodeCount: nodeCount)
        do {
            for index in cluster.nodes.indices { try cluster.launch(index) }
            for index in cluster.nodes.indices { try await cluster.waitUntilListening(index, timeout: timeout) }
        } catch {
            await cluster.stop()
            throw error
        }
        return cluster
    }

    deinit {
        processes.killAll()
        try? FileManager.default.removeItem(atPath: directory)
    }

    package func isRunning(_ index: Int) -> Bool { processes.isRunning(index) }

    package var processIdentifiers: [Int32] { processes.processIdentifiers }

    package func log(_ index: Int) -> String {
        (try? String(contentsOfFile: nodes[index].directory + "/nats.log", encoding: .utf8)) ?? ""
    }

    /// SIGTERM: nats-server closes its clients and leaves the cluster; its JetStream data stays for a restart.
    package func stop(node index: Int) async {
        guard let process = processes.take(node: index) else { return }
        await process.stop(grace: 30)
    }

    package func start(node index: Int) async throws {
        try launch(index)
        try await waitUntilListening(index, timeout: 120)
    }

    package func stop() async {
        for index in nodes.indices { await stop(node: index) }
    }

    /// Removes the cluster's directory (stores and logs); `stop()` first.
    package func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func launch(_ index: Int) throws {
        let node = nodes[index]
        let process = ProcessRunner(
            executable: Self.server,
            arguments: ["-c", node.directory + "/nats.conf"],
            workingDirectory: node.directory
        )
        try process.start()
        processes.started(process, node: index)
    }

    /// Until an MQTT 3.1.1 CONNECT is accepted: before the JetStream cluster has a meta leader and the MQTT
    /// account's streams exist, nats-server refuses MQTT clients (or holds the CONNACK back).
    private func waitUntilListening(_ index: Int, timeout: Double) async throws {
        let node = nodes[index]
        let deadline = ContinuousClock.now + .seconds(timeout)
        var lastRefusal = "the port never opened"
        while ContinuousClock.now < deadline {
            if FreePort.isAccepting(node.mqttPort) {
                switch await Self.probe(node) {
                case nil: return
                case let refusal?: lastRefusal = refusal
                }
            }
            guard isRunning(index) else {
                throw MosquittoBroker.FixtureError(
                    description: "nats-server \(node.name) exited before taking MQTT clients on \(node.endpoint): "
                        + String(log(index).suffix(3000))
                )
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw MosquittoBroker.FixtureError(
            description: "nats-server \(node.name) did not accept MQTT on \(node.endpoint) within \(timeout) s "
                + "(\(lastRefusal)): " + String(log(index).suffix(3000))
        )
    }

    /// One MQTT 3.1.1 connection to `node`, bounded by 20 s: nil when CONNACK accepted it, else why not.
    private static func probe(_ node: Node) async -> String? {
        let client = MosquittoClient()
        let events = client.events
        do {
            try client.connect(
                BrokerConnectOptions(
                    host: "127.0.0.1",
                    port: node.mqttPort,
                    clientID: "readiness-probe-\(node.name)",
                    protocolVersion: .v311
                )
            )
        } catch {
            return "\(error)"
        }
        let outcome = await withTaskGroup(of: String??.self) { group in
            group.addTask {
                for await event in events {
                    switch event {
                    case .connected: return .some(nil)
                    case .connectFailed(_, let reason, _): return .some(reason)
                    case .disconnected(let reason, _): return .some(reason)
                    default: continue
                    }
                }
                return .some("the connection closed")
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(20))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        await client.disconnect(flushTimeout: 0)
        return outcome ?? "no CONNACK within 20 s"
    }

    private func writeConfiguration(_ node: Node) throws {
        try FileManager.default.createDirectory(atPath: node.directory, withIntermediateDirectories: true)
        let routes = nodes.map { "nats-route://127.0.0.1:\($0.routePort)" }.joined(separator: ", ")
        let lines = [
            "# Generated by MotionAgent's Harness.NATSCluster",
            "server_name: \(node.name)",
            "listen: 127.0.0.1:\(node.clientPort)",
            "log_file: \"\(node.directory)/nats.log\"",
            "jetstream {",
            "  store_dir: \"\(node.directory)/jetstream\"",
            "  max_memory_store: 256MB",
            "  max_file_store: 2GB",
            "}",
            "cluster {",
            "  name: motion-test",
            "  listen: 127.0.0.1:\(node.routePort)",
            "  routes: [\(routes)]",
            "}",
            // The MQTT streams (sessions, retained messages, QoS 1 messages) stay replicated on every node (at
            // most 3, the default), and so does each QoS 1 subscription's JetStream consumer: nats-server places a
            // consumer of fewer replicas on random nodes of its stream, not on the client's node, so with one
            // replica the loss of any node silently ends the QoS 1 subscriptions of clients connected to the
            // others — an agent would stop hearing its desired documents while its own connection stays up
            // (docs/fleet.md, "NATS"). In memory: a clean session's consumers need no disk.
            "mqtt {",
            "  listen: 127.0.0.1:\(node.mqttPort)",
            "  consumer_memory_storage: true",
            "}",
        ]
        try (lines.joined(separator: "\n") + "\n").write(
            toFile: node.directory + "/nats.conf",
            atomically: true,
            encoding: .utf8
        )
    }
}
