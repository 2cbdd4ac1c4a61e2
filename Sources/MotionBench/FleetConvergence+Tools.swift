import ArgumentParser
import Foundation
import Harness
import MosquittoTransport

/// What the fleet costs to look at: the retained bytes a subscriber of every device receives, and the operator's
/// `motion-agent fleet status` over all of them (issue 28: under 2 s at 1000 devices).
extension FleetConvergence {
    /// The retained status and configuration document of every agent, as a fresh subscriber receives them.
    /// Read by `mosquitto_sub` in its own process: with 1000 agents' output pipes open, a client socket in the
    /// bench is numbered above FD_SETSIZE, and libmosquitto's loop refuses it (MOSQ_ERR_INVAL).
    func retainedBytesRows(_ brokers: FleetBrokers, board: FleetStatusBoard) async throws -> [BenchRow] {
        guard case .cluster = brokers.running else {
            return Self.retainedRows(try await readRetained(brokers, node: 0, count: 2 * agents, filters: nil))
        }
        // Every node's store, read apart: NATS should hold every agent's on each node; RabbitMQ holds what was
        // published through the node, so each node holds its own devices' only, and by topic only.
        var sizes: [String: Int] = [:]
        var perNode: [String] = []
        for node in 0..<brokers.nodeCount {
            let endpoint = brokers.endpoints[node]
            let expected =
                brokers.replicatesRetainedMessages ? agents : board.latest.values.filter { $0.server == endpoint }.count
            let filters =
                brokers.replicatesRetainedMessages
                ? ["motion/+/status", "motion/+/configuration"]
                : board.latest.keys.sorted().flatMap { ["motion/\($0)/status", "motion/\($0)/configuration"] }
            let read = try await readRetained(brokers, node: node, count: 2 * expected, filters: filters)
            perNode.append("\(read.filter { $0.key.hasSuffix("/status") }.count)")
            sizes.merge(read) { first, _ in first }
        }
        return Self.retainedRows(sizes) + [
            BenchRow(name: "retained statuses on each node", value: perNode.joined(separator: " / "))
        ]
    }

    /// The retained messages `node` hands a fresh subscriber of `filters` (nil: every status and configuration by
    /// wildcard, retained flag only, as the bench always read one mosquitto): topic → payload bytes. `count`
    /// ends the read early once that many arrived; otherwise it ends after 20 s (RabbitMQ's count per node is
    /// what the agents' statuses say, which a reconnect could change).
    private func readRetained(
        _ brokers: FleetBrokers,
        node: Int,
        count: Int,
        filters: [String]?
    ) async throws -> [String: Int] {
        let endpoint = brokers.endpoints[node].split(separator: ":")
        var arguments = ["-h", String(endpoint[0]), "-p", String(endpoint[1])]
        if let filters {
            arguments += ["-V", "mqttv311", "-C", "\(max(1, count))", "-W", "20", "-F", "%t %r %l"]
            arguments += filters.flatMap { ["-t", $0] }
        } else {
            arguments += ["-t", "motion/+/status", "-t", "motion/+/configuration"]
            arguments += ["--retained-only", "-C", "\(count)", "-W", "60", "-F", "%t 1 %l"]
        }
        let runner = ProcessRunner(executable: "/usr/bin/mosquitto_sub", arguments: arguments)
        try runner.start()
        guard let code = await runner.waitForExit(timeout: 90) else {
            runner.kill()
            throw ValidationError(
                "mosquitto_sub did not read the retained statuses of \(brokers.endpoints[node]) in 90 s"
            )
        }
        // 27: its -W timeout, which ends a read whose count was not reached; what it printed is the answer.
        guard code == 0 || code == 27 else {
            throw ValidationError(
                "mosquitto_sub on \(brokers.endpoints[node]) exited with \(code): \(runner.standardError)"
            )
        }
        var sizes: [String: Int] = [:]
        for line in runner.standardOutput.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[1] == "1", let size = Int(fields[2]) else { continue }
            sizes[String(fields[0])] = size
        }
        return sizes
    }

    /// Mean and largest retained status and configuration per agent, from topic → bytes.
    private static func retainedRows(_ sizes: [String: Int]) -> [BenchRow] {
        func row(_ suffix: String) -> BenchRow {
            let values = sizes.filter { $0.key.hasSuffix("/" + suffix) }.values.map(Double.init).sorted()
            let mean = values.reduce(0, +) / Double(max(1, values.count))
            return BenchRow(
                name: "retained {root}/\(suffix) per agent (bytes)",
                value: String(
                    format: "mean %.0f, max %.0f (%d retained, %.2f MB in all)",
                    mean,
                    values.last ?? .nan,
                    values.count,
                    values.reduce(0, +) / 1e6
                )
            )
        }
        return [row("status"), row("configuration")]
    }

    /// Where the agents publish on a cluster (each status names its node), and how many devices each node's
    /// subscriber heard from (every node should route every status); nothing on one mosquitto.
    func placementRows(_ board: FleetStatusBoard, brokers: FleetBrokers) -> [BenchRow] {
        guard case .cluster = brokers.running else { return [] }
        let servers = board.latest.values.map { $0.server ?? "?" }
        let counts = brokers.endpoints.map { endpoint in servers.filter { $0 == endpoint }.count }
        let elsewhere = servers.count - counts.reduce(0, +)
        return [
            BenchRow(
                name: "agents per node (status broker.server)",
                value: counts.map(String.init).joined(separator: " / ") + (elsewhere > 0 ? " (\(elsewhere) other)" : "")
            ),
            BenchRow(
                name: "devices heard by the bench's subscriber on each node",
                value: board.devicesHeardPerSubscriber.map(String.init).joined(separator: " / ")
            ),
        ]
    }

    /// Runs the real `motion-agent fleet status --json` against the broker `runs` times: wall time from spawn to
    /// exit (ms), and how many device rows it printed, which must be every agent.
    /// On RabbitMQ with `--devices`: a wildcard brings no retained status there (docs/fleet.md). On a cluster with
    /// `--timeout 60`: at 300 devices on RabbitMQ the tool's default 5 s ran out before every node had answered its
    /// subscriptions to each device's topics (27 Nov), which left no time to report.
    func fleetStatusRow(_ brokers: FleetBrokers, devicesFile: String, runs: Int = 3) async throws -> BenchRow {
        var times: [Double] = []
        var rows = 0
        var problems = ""
        for _ in 0..<runs {
            let runner = ProcessRunner(
                executable: agent,
                arguments: ["fleet", "status"] + brokers.operatorArguments + ["--json"]
                    + (brokers.replicatesRetainedMessages ? [] : ["--devices", devicesFile])
                    + (brokers.nodeCount > 1 ? ["--timeout", "60"] : [])
            )
            let start = BenchmarkClock.nanoseconds()
            try runner.start()
            let code = await runner.waitForExit(timeout: 120)
            times.append(Double(BenchmarkClock.nanoseconds() - start) / 1e6)
            guard let code else {
                runner.kill()
                throw ValidationError("motion-agent fleet status did not finish within 120 s")
            }
            let printed = try? JSONSerialization.jsonObject(with: Data(runner.standardOutput.utf8)) as? [[String: Any]]
            rows = printed?.count ?? 0
            // Exit 1 means some device has a problem (offline, behind, a key that differs): counted in the row,
            // the first such row printed, not fatal to the bench.
            if code != 0 {
                let troubled = (printed ?? []).filter { row in
                    row["online"] as? Bool != true || row["refused"] != nil
                        || !((row["differing"] as? [Any])?.isEmpty ?? true) || row["impostor"] != nil
                }
                problems = "; exit \(code), \(troubled.count) rows with a problem \(runner.standardError.prefix(200))"
                if let first = troubled.first, let data = try? JSONSerialization.data(withJSONObject: first) {
                    FileHandle.standardError.write(
                        Data("fleet status: \(String(decoding: data, as: UTF8.self))\n".utf8)
                    )
                }
            }
        }
        let sorted = times.sorted()
        return BenchRow(
            name: "motion-agent fleet status --json over all devices (ms)",
            value: String(
                format: "median %.0f, max %.0f of %d runs; %d rows",
                Statistics.median(times),
                sorted.last ?? .nan,
                runs,
                rows
            ) + problems,
            target: "< 2000 ms at 1000",
            met: rows == agents && (sorted.last ?? .infinity) < 2000 && problems.isEmpty
        )
    }
}
