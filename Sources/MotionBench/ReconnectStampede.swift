import ArgumentParser
import CBenchSupport
import Foundation
import Harness
import MosquittoTransport

/// `motion-bench reconnect`: N real agents on one local mosquitto; the broker is stopped for a few seconds and
/// started again, and the broker's own log tells, polled every 10 ms, when each TCP connection arrived (an
/// attempt) and when each agent was connected again. Run once per `mqtt.reconnect_jitter` (equal: the agent's
/// back-off before full jitter; full: now), with fresh agents each time.
struct ReconnectStampede: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconnect",
        abstract: "Connection attempts per 100 ms and time until N agents are back after a broker restart."
    )

    @Option(help: "The number of agents.") var agents = 100
    @Option(help: "The motion-agent binary (release).") var agent = ".build/release/motion-agent"
    @Option(help: "Seconds the broker stays down.") var down: Double = 5
    @Option(help: "reconnect_jitter values to compare, in order.") var jitter: [String] = ["equal", "full"]
    @Option(help: "Seconds to wait for every agent to connect.") var timeout: Double = 120

    /// What one poll of the broker's log found since the previous one.
    private struct LogTally {
        var attempts: [UInt64] = []
        var back: [String: UInt64] = [:]
    }

    func run() async throws {
        try AgentProcess.requireExecutable(agent)
        var rows: [BenchRow] = []
        for mode in jitter {
            let modeRows = try await MosquittoBroker.withStarted(options: .benchmark(tcpNoDelay: true)) { broker in
                try await measure(broker, jitter: mode)
            }
            rows += modeRows
        }
        BenchRow.printTable(
            "Reconnect after a broker restart (\(agents) agents, broker down \(down) s, one mosquitto on loopback)",
            rows
        )
    }

    private func measure(_ broker: MosquittoBroker, jitter: String) async throws -> [BenchRow] {
        let devices = (0..<agents).map { String(format: "bench-reconnect-%04d", $0) }
        let directory = broker.directory + "/reconnect"
        var processes: [AgentProcess] = []
        defer { for process in processes { process.runner.kill() } }
        for device in devices {
            processes.append(try start(device, jitter: jitter, port: broker.port, under: directory))
        }
        try await waitUntil("every agent connected") {
            devices.allSatisfy { broker.log.contains("as motion-agent-\($0) ") }
        }
        try await Task.sleep(for: .seconds(2))

        await broker.stop()
        try await Task.sleep(for: .seconds(down))
        let offset = broker.log.utf8.count
        let restarted = BenchmarkClock.nanoseconds()
        try await broker.start()
        var tally = LogTally()
        var seen = offset
        let deadline = restarted + UInt64(timeout * 1e9)
        while tally.back.count < agents && BenchmarkClock.nanoseconds() < deadline {
            let now = BenchmarkClock.nanoseconds()
            let text = broker.log
            let bytes = Array(text.utf8)
            if bytes.count > seen {
                let fresh = String(decoding: bytes[seen...], as: UTF8.self)
                seen = bytes.count
                for line in fresh.split(separator: "\n") {
                    if line.contains("New connection from") { tally.attempts.append(now) }
                    if let range = line.range(of: " as motion-agent-") {
                        let id = line[range.upperBound...].prefix { $0 != " " }
                        if tally.back[String(id)] == nil { tally.back[String(id)] = now }
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        guard tally.back.count == agents else {
            throw ValidationError("only \(tally.back.count) of \(agents) agents came back within \(Int(timeout)) s")
        }
        var bins: [Int] = []
        for attempt in tally.attempts {
            let bin = Int((attempt - restarted) / 100_000_000)
            if bin >= bins.count { bins += Array(repeating: 0, count: bin + 1 - bins.count) }
            bins[bin] += 1
        }
        let back = tally.back.values.map { Double($0 - restarted) / 1e6 }.sorted()
        let firstSecond = bins.prefix(10).map(String.init).joined(separator: " ")
        return [
            BenchRow(
                name: "\(jitter): attempts per 100 ms, max",
                value: "\(bins.max() ?? 0) (of \(tally.attempts.count) in \(bins.count) bins)"
            ),
            BenchRow(name: "\(jitter): attempts per 100 ms, first second", value: firstSecond),
            BenchRow(
                name: "\(jitter): broker start → agent connected (ms)",
                value: String(
                    format: "p50 %.0f, p99 %.0f, max %.0f",
                    Statistics.percentile(back, 50),
                    Statistics.percentile(back, 99),
                    back.last ?? .nan
                )
            ),
        ]
    }

    private func start(_ device: String, jitter: String, port: Int, under directory: String) throws -> AgentProcess {
        // The default back-off (0.5 s doubling to 30 s), only the jitter differs.
        try LowRateBenchAgent.start(
            device,
            agent: agent,
            under: directory,
            mqtt: ["host: 127.0.0.1", "port: \(port)", "reconnect_jitter: \(jitter)"],
            extra: "control:\n  persist: false"
        )
    }

    private func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = BenchmarkClock.nanoseconds() + UInt64(timeout * 1e9)
        while !condition() {
            guard BenchmarkClock.nanoseconds() < deadline else {
                throw ValidationError("\(what) did not happen within \(Int(timeout)) s")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
