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
    func retainedBytesRows(_ broker: MosquittoBroker) async throws -> [BenchRow] {
        let runner = ProcessRunner(
            executable: "/usr/bin/mosquitto_sub",
            arguments: [
                "-h", broker.host, "-p", "\(broker.port)", "-t", "motion/+/status", "-t", "motion/+/configuration",
                "--retained-only", "-C", "\(2 * agents)", "-W", "60", "-F", "%t %l",
            ]
        )
        try runner.start()
        guard await runner.waitForExit(timeout: 90) != nil else {
            runner.kill()
            throw ValidationError("mosquitto_sub did not read the retained statuses within 90 s")
        }
        let lines = runner.standardOutput.split(separator: "\n").map { $0.split(separator: " ") }
        func row(_ suffix: String) -> BenchRow {
            let sizes = lines.compactMap { fields -> Double? in
                guard fields.count == 2, fields[0].hasSuffix("/" + suffix) else { return nil }
                return Double(fields[1])
            }.sorted()
            let mean = sizes.reduce(0, +) / Double(max(1, sizes.count))
            return BenchRow(
                name: "retained {root}/\(suffix) per agent (bytes)",
                value: String(
                    format: "mean %.0f, max %.0f (%d retained, %.2f MB in all)",
                    mean,
                    sizes.last ?? .nan,
                    sizes.count,
                    sizes.reduce(0, +) / 1e6
                )
            )
        }
        return [row("status"), row("configuration")]
    }

    /// Runs the real `motion-agent fleet status --json` against the broker `runs` times: wall time from spawn to
    /// exit (ms), and how many device rows it printed, which must be every agent.
    func fleetStatusRow(_ broker: MosquittoBroker, runs: Int = 3) async throws -> BenchRow {
        var times: [Double] = []
        var rows = 0
        var problems = ""
        for _ in 0..<runs {
            let runner = ProcessRunner(
                executable: agent,
                arguments: ["fleet", "status", "--host", broker.host, "--port", "\(broker.port)", "--json"]
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
