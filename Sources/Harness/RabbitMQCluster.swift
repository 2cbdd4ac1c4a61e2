import AgentPorts
import Foundation
import MosquittoTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real RabbitMQ cluster (Debian's rabbitmq-server 3.10 with its MQTT plugin) of `nodeCount` nodes on one
/// host, for the failover and cluster tests and `motion-bench fleet --engine rabbitmq`: every node listens on 127.0.0.1 only (MQTT on a free port, AMQP switched off, Erlang
/// distribution on a free port), the nodes share a cookie in a private HOME, and their own epmd listens on
/// 127.0.0.1 on a free port, so nothing here meets a system RabbitMQ or another test's cluster. The nodes find
/// each other at first boot (classic peer discovery), so no rabbitmqctl is needed. A missing rabbitmq-server is
/// an error, not a skip: scripts/test.sh installs it.
package final class RabbitMQCluster: BrokerCluster {
    package static let server = "/usr/lib/rabbitmq/bin/rabbitmq-server"

    package struct Node: Sendable {
        package let name: String
        package let mqttPort: Int
        package let distributionPort: Int
        /// Unused (AMQP is off), but RabbitMQ derives defaults from it: distinct per node.
        package let amqpPort: Int
        package let directory: String
        package var endpoint: String { "127.0.0.1:\(mqttPort)" }
    }

    package let nodes: [Node]
    package var engine: String { "RabbitMQ 3.10" }
    package var endpoints: [String] { nodes.map(\.endpoint) }
    /// The MQTT plugin's retained store is per node (rabbit_mqtt_retainer), and it serves a retained message
    /// only to a subscription of exactly its topic, never to a wildcard.
    package var replicatesRetainedMessages: Bool { false }
    package var operatorReadQoS: Int { 1 }
    /// The private HOME: the Erlang cookie, and each node's configuration, database and logs.
    package let directory: String
    package let epmdPort: Int
    private let processes = NodeProcesses()

    package init(nodeCount: Int = 3) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.server) else {
            throw MosquittoBroker.FixtureError(
                description: "rabbitmq-server is not installed: run `apt-get install -y rabbitmq-server` "
                    + "(scripts/test.sh does)"
            )
        }
        let template = NSTemporaryDirectory() + "rabbitmq-test-" + String(repeating: "X", count: 6)
        var path = Array(template.utf8CString)
        guard mkdtemp(&path) != nil else {
            throw MosquittoBroker.FixtureError(description: "mkdtemp \(template) failed")
        }
        directory = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        epmdPort = FreePort.find()
        let suffix = String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        var ports = Set<Int>([epmdPort])
        func freshPort() -> Int {
            while true {
                let port = FreePort.find()
                if ports.insert(port).inserted { return port }
            }
        }
        let base = directory
        var made: [Node] = []
        for index in 1...max(1, nodeCount) {
            made.append(
                Node(
                    name: "motion\(index)-\(suffix)@localhost",
                    mqttPort: freshPort(),
                    distributionPort: freshPort(),
                    amqpPort: freshPort(),
                    directory: "\(base)/node\(index)"
                )
            )
        }
        nodes = made
        // Erlang refuses a cookie file others may read.
        let cookie = base + "/.erlang.cookie"
        try "motion-agent-test-\(suffix)".write(toFile: cookie, atomically: true, encoding: .utf8)
        chmod(cookie, 0o400)
        for node in nodes { try writeConfiguration(node) }
    }

    /// Starts every node and waits (bounded by `timeout` seconds) until each accepts MQTT connections, which
    /// RabbitMQ does only after the node has joined the cluster and started the plugin.
    package static func started(nodeCount: Int = 3, timeout: Double = 240) async throws -> RabbitMQCluster {
        let cluster = try RabbitMQCluster(nodeCount: nodeCount)
        do {
            // One node at a time, each taking clients before the next boots, as an operator forms a cluster.
            // Booted together, the nodes raced under load (CI, 26 Nov): one stayed refusing every client with
            // "client ID registration timed out" for 240 s, its MQTT client-id tracker (a Raft cluster across
            // the nodes) never finding a leader. Started in turn, the first forms the cluster and each next one
            // joins it and its tracker.
            for index in cluster.nodes.indices {
                try cluster.launch(index)
                try await cluster.waitUntilListening(index, timeout: timeout)
            }
        } catch {
            await cluster.stop()
            throw error
        }
        return cluster
    }

    deinit {
        processes.killAll()
        for node in nodes { Self.killBeam(of: node) }
        Self.killEPMD(port: epmdPort)
        try? FileManager.default.removeItem(atPath: directory)
    }

    package func isRunning(_ index: Int) -> Bool { processes.isRunning(index) }

    package var processIdentifiers: [Int32] { processes.processIdentifiers }

    /// The node's log file (RabbitMQ's own; stdout holds only the banner).
    package func log(_ index: Int) -> String {
        let node = nodes[index]
        return (try? String(contentsOfFile: "\(node.directory)/log/\(node.name).log", encoding: .utf8)) ?? ""
    }

    /// Stops one node as an operator would (SIGTERM: rabbitmq-server stops the node cleanly).
    package func stop(node index: Int) async { await stop(node: index, timeout: 60) }

    package func stop(node index: Int, timeout: Double) async {
        guard let process = processes.take(node: index) else { return }
        process.terminate()
        if await process.waitForExit(timeout: timeout) == nil { process.kill() }
        Self.killBeam(of: nodes[index])
    }

    /// Starts a node that was stopped again, with its database (it rejoins the cluster).
    package func start(node index: Int) async throws { try await start(node: index, timeout: 120) }

    package func start(node index: Int, timeout: Double) async throws {
        try launch(index)
        try await waitUntilListening(index, timeout: timeout)
    }

    package func stop() async {
        for index in nodes.indices { await stop(node: index) }
        Self.killEPMD(port: epmdPort)
    }

    private func launch(_ index: Int) throws {
        let node = nodes[index]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = directory
        environment["ERL_EPMD_ADDRESS"] = "127.0.0.1"
        environment["ERL_EPMD_PORT"] = String(epmdPort)
        environment["RABBITMQ_NODENAME"] = node.name
        environment["RABBITMQ_NODE_IP_ADDRESS"] = "127.0.0.1"
        environment["RABBITMQ_NODE_PORT"] = String(node.amqpPort)
        environment["RABBITMQ_DIST_PORT"] = String(node.distributionPort)
        environment["RABBITMQ_MNESIA_BASE"] = node.directory + "/mnesia"
        environment["RABBITMQ_LOG_BASE"] = node.directory + "/log"
        environment["RABBITMQ_CONFIG_FILE"] = node.directory + "/rabbitmq.conf"
        environment["RABBITMQ_ENABLED_PLUGINS_FILE"] = node.directory + "/enabled_plugins"
        environment["RABBITMQ_PID_FILE"] = node.directory + "/pid"
        // The distribution listener on loopback only (RabbitMQ's own variables do not cover it).
        // One scheduler of each kind and no busy-waiting: three idle nodes otherwise keep a 2-core machine
        // busy, which slows every test running beside them.
        environment["RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS"] =
            "-kernel inet_dist_use_interface {127,0,0,1} +S 1:1 +SDcpu 1:1 +sbwt none +sbwtdcpu none +sbwtdio none"
        let process = ProcessRunner(executable: Self.server, environment: environment, workingDirectory: directory)
        try process.start()
        processes.started(process, node: index)
    }

    /// Until an MQTT 3.1.1 CONNECT is accepted: the listener opens before the node takes clients (it answers
    /// "server unavailable", return code 3, until the client id tracking's Raft cluster has a leader).
    private func waitUntilListening(_ index: Int, timeout: Double) async throws {
        let node = nodes[index]
        let deadline = ContinuousClock.now + .seconds(timeout)
        var lastRefusal = ""
        while ContinuousClock.now < deadline {
            if FreePort.isAccepting(node.mqttPort) {
                switch await Self.probe(node) {
                case nil: return
                case let refusal?: lastRefusal = refusal
                }
            }
            guard isRunning(index) else {
                throw MosquittoBroker.FixtureError(
                    description: "RabbitMQ node \(node.name) exited before listening on \(node.endpoint): "
                        + String(log(index).suffix(3000))
                )
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        if FreePort.isAccepting(node.mqttPort), await Self.probe(node) == nil { return }
        throw MosquittoBroker.FixtureError(
            description: "RabbitMQ node \(node.name) did not accept MQTT on \(node.endpoint) within \(timeout) s "
                + "(\(lastRefusal)): " + String(log(index).suffix(3000))
        )
    }

    /// One MQTT 3.1.1 connection to `node`: nil when CONNACK accepted it, else why not.
    private static func probe(_ node: Node) async -> String? {
        let client = MosquittoClient()
        var events = client.events.makeAsyncIterator()
        do {
            try client.connect(
                BrokerConnectOptions(
                    host: "127.0.0.1",
                    port: node.mqttPort,
                    clientID: "readiness-probe",
                    protocolVersion: .v311
                )
            )
        } catch {
            return "\(error)"
        }
        let event = await events.next()
        await client.disconnect(flushTimeout: 0)
        switch event {
        case .connected: return nil
        case .connectFailed(_, let reason, _): return reason
        default: return "\(String(describing: event))"
        }
    }

    private func writeConfiguration(_ node: Node) throws {
        try FileManager.default.createDirectory(atPath: node.directory, withIntermediateDirectories: true)
        var lines = [
            "# Generated by MotionAgent's Harness.RabbitMQCluster",
            "listeners.tcp = none",
            "mqtt.listeners.tcp.1 = 127.0.0.1:\(node.mqttPort)",
            "mqtt.allow_anonymous = true",
            "log.console = false",
            "log.file.level = info",
            "cluster_formation.peer_discovery_backend = classic_config",
        ]
        for (index, peer) in nodes.enumerated() {
            lines.append("cluster_formation.classic_config.nodes.\(index + 1) = \(peer.name)")
        }
        try (lines.joined(separator: "\n") + "\n").write(
            toFile: node.directory + "/rabbitmq.conf",
            atomically: true,
            encoding: .utf8
        )
        try "[rabbitmq_mqtt].\n".write(toFile: node.directory + "/enabled_plugins", atomically: true, encoding: .utf8)
    }

    /// The Erlang VM outlives a killed rabbitmq-server script: end it by its pid file.
    private static func killBeam(of node: Node) {
        guard let text = try? String(contentsOfFile: node.directory + "/pid", encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 1
        else { return }
        _ = kill(pid, SIGKILL)
    }

    /// The nodes' epmd stays up after them (it is a daemon): ask it to leave.
    private static func killEPMD(port: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/epmd")
        process.arguments = ["-port", String(port), "-kill"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return }
        process.waitUntilExit()
    }
}
