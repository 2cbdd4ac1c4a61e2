import AgentPorts
import Foundation
import TestSupport
import Testing

/// Each test's time limit: three nodes booting (30–80 s each on 2 cores) and ~8 min of bounded waits for 4 devices,
/// more for the long form's devices (scripts/checks/cluster.sh).
private let clusterTimeLimitMinutes =
    20 + 2 * max(4, Int(ProcessInfo.processInfo.environment["MOTION_AGENT_CLUSTER_DEVICES"] ?? "") ?? 4)

/// The fleet model on three-node broker clusters (docs/fleet.md, "Brokers that hold the fleet model"), with the
/// real `motion-agent` and its operator tool: devices spread over the nodes; a fleet and a group document reach
/// every device; the node of a streaming device stops, its devices fail over and keep every layer; a device that
/// joins on another node converges; a clear reaches every device, one that was offline included; the streaming
/// device's QoS 1 durable samples all arrive (`seq` counted by a persistent-session subscriber).
///
/// NATS replicates retained messages across its nodes, so the documents go through one node. RabbitMQ keeps
/// them per node, so `motion-agent fleet` publishes to and reads from every node (`--server`, repeated, and
/// `--devices`, as RabbitMQ serves no retained message to a wildcard).
///
/// Booting the clusters takes both cores for a while (RabbitMQ 30–80 s): scripts/test.sh runs this target alone,
/// after the suite, with MOTION_AGENT_CLUSTER_TESTS=1 and 4 devices; scripts/checks/cluster.sh is the long form
/// (MOTION_AGENT_CLUSTER_DEVICES, default 12). Figures are printed with the prefix `cluster:`.
@Suite(.timeLimit(.minutes(clusterTimeLimitMinutes)), .serialized)
struct ClusterFleetTests {
    static let environment = ProcessInfo.processInfo.environment
    static let enabled = environment["MOTION_AGENT_CLUSTER_TESTS"] == "1"
    /// The devices of a run, the streaming one, the late one and the one away during the clear included.
    static let deviceCount = max(4, Int(environment["MOTION_AGENT_CLUSTER_DEVICES"] ?? "") ?? 4)

    @Test(.enabled(if: enabled)) func onANATSClusterDesiredStatePublishedThroughOneNodeReachesEveryDevice()
        async throws
    {
        let launched = ContinuousClock.now
        let cluster = try await NATSCluster.started(nodeCount: 3)
        print("cluster: NATS 3-node cluster accepting MQTT \(ContinuousClock.now - launched) after launch")
        do {
            try await FleetOnCluster(cluster: cluster, publishThrough: [0]).run()
        } catch {
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }

    @Test(.enabled(if: enabled)) func onARabbitMQClusterTheToolReachesEveryNodeAndEveryDeviceConverges()
        async throws
    {
        let launched = ContinuousClock.now
        let cluster = try await RabbitMQCluster.started(nodeCount: 3)
        print("cluster: RabbitMQ 3-node cluster accepting MQTT \(ContinuousClock.now - launched) after launch")
        do {
            try await FleetOnCluster(cluster: cluster, publishThrough: [0, 1, 2]).run()
        } catch {
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }
}

/// One run of the scenario on a started cluster.
struct FleetOnCluster {
    let cluster: any BrokerCluster
    /// The nodes the operator tool publishes through and reads from.
    let publishThrough: [Int]
    let directory = NSTemporaryDirectory() + "motion-cluster-\(UUID().uuidString.prefix(8))"

    /// Device 0 streams (QoS 1, durable) and its node is the one stopped; the last joins late, on the third
    /// node; the one before it is away while the fleet layer is cleared. Even devices are in group `lab`.
    var devices: [String] { (0..<ClusterFleetTests.deviceCount).map { "cl-\($0)" } }
    var streaming: String { devices[0] }
    var late: String { devices[devices.count - 1] }
    var away: String { devices[devices.count - 2] }
    func inLab(_ device: String) -> Bool { (devices.firstIndex(of: device) ?? 1) % 2 == 0 }
    /// The observers' node: the streaming device never uses it, so it is never the one stopped.
    var observerNode: Int { 2 }

    func run() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let observer = try await CapturingSubscriber(
            options: options(node: observerNode, clientID: "cluster-observer"),
            filters: ["motion/+/status"],
            qos: 1,
            timeout: 30
        )
        let samples = try await CapturingSubscriber(
            options: options(node: observerNode, clientID: "cluster-seq", cleanSession: false),
            filters: ["motion/\(streaming)/accelerometer"],
            qos: 1,
            timeout: 30
        )
        // More QoS 1 subscribers on the observers' node: each is a broker-side subscription of its own (on NATS a
        // JetStream consumer, which nats-server may place on another node), and every one must keep hearing once
        // another node stops. With one-replica consumers, NATS silenced a third of them (docs/fleet.md, "NATS").
        var listeners: [CapturingSubscriber] = []
        for index in 0..<6 {
            listeners.append(
                try await CapturingSubscriber(
                    options: options(node: observerNode, clientID: "cluster-listener-\(index)"),
                    filters: ["motion/+/status"],
                    qos: 1,
                    timeout: 30
                )
            )
        }
        var agents: [String: AgentProcess] = [:]
        defer { for agent in agents.values { agent.runner.kill() } }
        func log(_ device: String) -> String { String(agents[device]?.runner.standardError.suffix(3000) ?? "") }

        // Every device but the late one, spread over the nodes (each starts at a random entry of its list).
        let early = devices.filter { $0 != late }
        for device in early { agents[device] = try start(device) }
        for device in early {
            try await waitForStatus(observer, device, "a birth") { $0.online }
        }
        let placement = Dictionary(grouping: early) { lastOnline(observer, $0)?.server ?? "?" }
        print("cluster: \(cluster.engine): devices per node \(placement.mapValues(\.count))")
        try listDevices(early + [late])

        // A fleet and a group document, through the tool.
        var (code, output) = try await fleet(
            ["set", "--fleet", "streams.accelerometer.rate_hz=20", "--wait", "60", "--devices", devicesFile]
        )
        #expect(code == 0, "\(output)")
        #expect(output.contains("\(early.count) of \(early.count + 1) applied v1"), "\(output)")
        #expect(output.contains("1 never seen: \(late)"), "\(output)")
        // --devices: on RabbitMQ a wildcard brings no retained status, so without it the tool knows the group's
        // members only as their statuses arrive and may stop waiting after the first.
        (code, output) = try await fleet(
            ["set", "--group", "lab", "metrics.interval_s=7", "--wait", "60", "--devices", devicesFile]
        )
        #expect(code == 0, "\(output)")
        let labEarly = early.filter(inLab)
        #expect(output.contains("\(labEarly.count) of \(labEarly.count) applied v1"), "\(output)")
        for device in early {
            try await waitForStatus(observer, device, "fleet v1 and 20 Hz", log: log(device)) {
                $0.desired["fleet"] == 1 && $0.accelerometerRequestedHz == 20
                    && (!inLab(device) || $0.desired["group lab"] == 1)
            }
        }

        // The streaming device's node stops: every device on it fails over and keeps every layer.
        let stoppedServer = try #require(lastOnline(observer, streaming)?.server)
        let stoppedNode = try #require(cluster.endpoints.firstIndex(of: stoppedServer))
        let onStopped = early.filter { lastOnline(observer, $0)?.server == stoppedServer }
        let birthsBefore = Dictionary(uniqueKeysWithValues: onStopped.map { ($0, births(observer, $0)) })
        let stopped = ContinuousClock.now
        await cluster.stop(node: stoppedNode)
        for device in onStopped {
            try await waitForStatus(observer, device, "a birth on another node", log: log(device)) {
                $0.online && $0.server != stoppedServer
            }
            #expect(births(observer, device) > birthsBefore[device]!)
            let status = try #require(lastOnline(observer, device))
            #expect(status.desired["fleet"] == 1, "\(device) kept the fleet layer: \(status)")
            #expect(status.accelerometerRequestedHz == 20, "\(device) kept 20 Hz: \(status)")
            if inLab(device) { #expect(status.desired["group lab"] == 1, "\(device) kept the group layer") }
        }
        print(
            "cluster: \(cluster.engine): \(onStopped.count) devices on \(stoppedServer) failed over in \(ContinuousClock.now - stopped)"
        )
        for device in onStopped {
            let deaf = await Self.waitForAll(listeners, timeout: 30) { listener in
                statuses(listener, device).contains { $0.online && $0.server != stoppedServer }
            }
            #expect(
                deaf.isEmpty,
                "QoS 1 subscribers on \(cluster.endpoints[observerNode]) that never heard \(device)'s birth after \(stoppedServer) stopped: \(deaf) of \(listeners.count)"
            )
        }
        for listener in listeners { await listener.close() }

        // A device that joins on another node than the one the documents went through converges.
        let joinNode = observerNode
        agents[late] = try start(late, servers: [cluster.endpoints[joinNode]])
        try await waitForStatus(observer, late, "fleet v1 on its first connection", log: log(late)) {
            $0.online && $0.desired["fleet"] == 1 && $0.accelerometerRequestedHz == 20
                && (!inLab(late) || $0.desired["group lab"] == 1)
        }

        // The node comes back (the clear must reach every node's retained store), one device goes away, and the
        // fleet layer is cleared.
        try await cluster.start(node: stoppedNode)
        let awayAgent = try #require(agents[away])
        awayAgent.runner.terminate()
        #expect(await awayAgent.runner.waitForExit(timeout: 20) == 0)
        (code, output) = try await fleet(["clear", "--fleet", "--wait", "60", "--devices", devicesFile])
        #expect(code == 0, "\(output)")
        #expect(output.contains("published fleet v2"), "\(output)")
        #expect(output.contains("\(devices.count - 1) of \(devices.count) applied v2"), "\(output)")
        #expect(output.contains("1 offline: \(away)"), "\(output)")
        for device in devices where device != away {
            try await waitForStatus(observer, device, "the fleet layer cleared", log: log(device)) {
                $0.online && $0.desired["fleet"] == 2 && $0.accelerometerRequestedHz == configuredRate(device)
            }
        }
        // Back, on any node, the one that was away finds the clear retained.
        agents[away] = try AgentProcess(
            config: try String(contentsOfFile: awayAgent.configPath, encoding: .utf8),
            directory: awayAgent.directory
        )
        try await waitForStatus(observer, away, "the clear applied after its restart", log: log(away)) {
            $0.online && $0.desired["fleet"] == 2 && $0.accelerometerRequestedHz == configuredRate(away)
        }

        // The tool's view over every node: nothing left to report, and each setting's source readable.
        (code, output) = try await fleet(["status", "--json", "--explain", "--devices", devicesFile])
        #expect(code == 0, "\(output)")
        let rows = (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]) ?? []
        #expect(rows.count == devices.count, "\(output)")
        for row in rows {
            let device = row["device"] as? String ?? "?"
            let settings = row["settings"] as? [String: [String: Any]]
            let interval = settings?["metrics.interval_s"]?["source"] as? String
            #expect(interval == (inLab(device) ? "group lab v1" : "config.yaml"), "\(device): \(row)")
        }

        // Nothing the streaming device sent was lost across the failover and the changes of rate.
        let agent = try #require(agents[streaming])
        agent.runner.terminate()
        #expect(await agent.runner.waitForExit(timeout: 30) == 0, "\(log(streaming))")
        // The goodbye is the offline status that carries the outbox's counters: a will (from the connection to
        // the stopped node, which a restarted NATS node may deliver late) says offline too, without them.
        func goodbye() -> Status? { statuses(observer, streaming).last { !$0.online && $0.durableAppended != nil } }
        #expect(await Self.wait(timeout: 60) { goodbye() != nil }, "no goodbye; its log: \(log(streaming))")
        let appended = try #require(goodbye()?.durableAppended, "the goodbye's outbox counters")
        let complete = await Self.wait(timeout: 60) { Set(seqs(samples)).count >= appended }
        let unique = Set(seqs(samples))
        let lost = (1...max(1, appended)).filter { !unique.contains($0) }
        print(
            "cluster: \(cluster.engine): \(streaming) sent \(appended), received \(seqs(samples).count), unique \(unique.count), lost \(lost.count)"
        )
        #expect(complete && lost.isEmpty, "lost seq \(lost.prefix(20)) of \(appended)")
        await samples.close()
        await observer.close()
    }

    // MARK: - Agents

    /// Starts `device` on `servers` (default: every node, in an order of its own; the streaming device avoids
    /// the observers' node).
    func start(_ device: String, servers: [String]? = nil) throws -> AgentProcess {
        let index = devices.firstIndex(of: device) ?? 0
        let nodes = cluster.endpoints.indices.map { (index + $0) % cluster.endpoints.count }
        let list =
            servers
            ?? (device == streaming
            ? nodes.filter { $0 != observerNode } : nodes).map { cluster.endpoints[$0] }
        let streams =
            device == streaming
            ? "  accelerometer: {enabled: true, rate_hz: 50, qos: 1, durable: true}"
            : "  accelerometer: {enabled: true, rate_hz: 1}"
        let others = ["gyroscope", "magnetometer", "device-motion", "pedometer", "activity", "altimeter", "submersion"]
            .map { "  \($0): {enabled: false}" }.joined(separator: "\n")
        let config = """
            device:
              id: \(device)
            agent:
              state_dir: state
              log_level: info
            source:
              kind: simulated
              simulated: {scenario: stationary, seed: 3, rate_hz: \(device == streaming ? 50 : 25)}
            mqtt:
              servers: [\(list.joined(separator: ", "))]
              protocol: \(device == streaming ? "auto" : "v311")
              keepalive: 5
              reconnect_min_delay: 0.2
              reconnect_max_delay: 1
            control:
              groups: [\(inLab(device) ? "lab" : "")]
            metrics:
              interval_s: 0
            streams:
            \(streams)
            \(others)
            """
        return try AgentProcess(config: config)
    }

    /// config.yaml's accelerometer rate, which a cleared fleet layer leaves.
    func configuredRate(_ device: String) -> Double { device == streaming ? 50 : 1 }

    // MARK: - The operator tool

    var devicesFile: String { directory + "/devices.txt" }

    func listDevices(_ ids: [String]) throws {
        try (["# the devices of this run"] + ids).joined(separator: "\n").write(
            toFile: devicesFile,
            atomically: true,
            encoding: .utf8
        )
    }

    /// Runs `motion-agent fleet` with `--server` for each node it goes through (MQTT 3.1.1: both engines).
    func fleet(_ arguments: [String]) async throws -> (Int32?, String) {
        let servers = publishThrough.flatMap { ["--server", cluster.endpoints[$0]] }
        let runner = ProcessRunner(
            executable: AgentProcess.executable,
            arguments: ["fleet", arguments[0]] + servers
                + ["--protocol", "v311", "--timeout", "20", "--read-qos", "\(cluster.operatorReadQoS)"]
                + arguments.dropFirst()
        )
        try runner.start()
        let code = await runner.waitForExit(timeout: 120)
        if code == nil { runner.kill() }
        return (code, runner.standardOutput + runner.standardError)
    }

    // MARK: - What the observers saw

    func options(node: Int, clientID: String, cleanSession: Bool = true) -> BrokerConnectOptions {
        BrokerConnectOptions(
            host: "127.0.0.1",
            port: cluster.port(node),
            clientID: clientID,
            protocolVersion: .v311,
            cleanSession: cleanSession
        )
    }

    struct Status: CustomStringConvertible {
        var online: Bool
        var server: String?
        var desired: [String: Int]
        var accelerometerRequestedHz: Double?
        var durableAppended: Int?

        init(_ json: [String: Any]) {
            online = json["state"] as? String == "online"
            server = (json["broker"] as? [String: Any])?["server"] as? String
            desired = ((json["configuration"] as? [String: Any])?["desired"] as? [String: Int]) ?? [:]
            accelerometerRequestedHz =
                ((json["streams"] as? [String: Any])?["accelerometer"] as? [String: Any])?["requestedRateHz"] as? Double
            durableAppended = (json["outbox"] as? [String: Any])?["durableAppended"] as? Int
        }

        var description: String {
            "\(online ? "online" : "offline") on \(server ?? "?"), desired \(desired), accelerometer \(accelerometerRequestedHz.map { "\($0)" } ?? "?") Hz"
        }
    }

    func statuses(_ observer: CapturingSubscriber, _ device: String) -> [Status] {
        observer.messages(on: "motion/\(device)/status").map { Status(payloadJSON($0)) }
    }

    func lastOnline(_ observer: CapturingSubscriber, _ device: String) -> Status? {
        statuses(observer, device).last(where: \.online)
    }

    func births(_ observer: CapturingSubscriber, _ device: String) -> Int {
        statuses(observer, device).filter(\.online).count
    }

    /// Waits (60 s) until the device's latest status satisfies `condition`; returns it.
    @discardableResult
    func waitForStatus(
        _ observer: CapturingSubscriber,
        _ device: String,
        _ what: String,
        log: @autoclosure () -> String = "",
        _ condition: @escaping (Status) -> Bool
    ) async throws -> Status {
        let met = await Self.wait(timeout: 60) { statuses(observer, device).last.map(condition) ?? false }
        let last = statuses(observer, device).last
        // The nodes' warnings and errors (a stopped peer's route retries left out).
        let nodes = cluster.endpoints.indices.map { index in
            let lines = cluster.log(index).split(separator: "\n").filter {
                ($0.contains("[ERR]") || $0.contains("[WRN]") || $0.contains("error")) && !$0.contains("route")
            }
            return "node \(index) (\(cluster.endpoints[index])):\n" + lines.suffix(30).joined(separator: "\n")
        }
        #expect(
            met,
            "\(device): \(what) (last status: \(last.map(\.description) ?? "none")); its log: \(log())\nnode logs:\n\(nodes.joined(separator: "\n"))"
        )
        guard met, let last else { throw ScenarioStopped(description: "\(device): \(what) did not happen") }
        return last
    }

    func seqs(_ samples: CapturingSubscriber) -> [Int] {
        samples.messages(on: "motion/\(streaming)/accelerometer").compactMap { payloadJSON($0)["seq"] as? Int }
    }

    /// Waits until `heard` holds for every listener; returns the indices of those it never held for.
    static func waitForAll(
        _ listeners: [CapturingSubscriber],
        timeout: Double,
        _ heard: (CapturingSubscriber) -> Bool
    ) async -> [Int] {
        _ = await wait(timeout: timeout) { listeners.allSatisfy(heard) }
        return listeners.indices.filter { !heard(listeners[$0]) }
    }

    static func wait(timeout: Double, _ condition: () -> Bool) async -> Bool {
        await Polling.until(timeout: timeout, interval: .milliseconds(20), condition)
    }

    struct ScenarioStopped: Error, CustomStringConvertible {
        var description: String
    }
}
