import AgentPorts
import ArgumentParser
import Foundation
import Harness
import MosquittoTransport

/// How `motion-bench fleet` publishes each fleet document, as an operator does on its engine, and what the
/// operator tool's publishes cost.
///
/// On one mosquitto the document goes out with `mosquitto_pub`, retained, as the bench always did. On a cluster it
/// goes out with the real `motion-agent fleet set --fleet`: through one node on NATS (JetStream serves a retained
/// message from every node), through every node on RabbitMQ (each keeps its own; docs/fleet.md).
struct FleetPublishes {
    /// The operator's device list (`--devices`), for RabbitMQ.
    var devicesFile: String
    /// Per publish through the tool: its version, spawn → the document's first copy heard, spawn → exit (ms).
    private var tool: [(version: Int, heard: Double, exited: Double)] = []

    init(devicesFile: String) { self.devicesFile = devicesFile }

    /// Publishes fleet document `version` (the accelerometer at `rateHz`) retained; returns CLOCK_MONOTONIC ns of
    /// the publish, which the convergence figures count from: on mosquitto, just before `mosquitto_pub` is spawned;
    /// on a cluster, the first copy of the document any node delivers to the bench. `fleet set` first connects to
    /// the nodes and reads the retained document and the statuses it builds on; that is the tool's time, not the
    /// fleet's, and has its own row (`rows`).
    /// The rates are ones the simulated IMU at 25 Hz offers (25 / 2ⁿ), so that no agent notes an uneven
    /// decimation and `fleet status` finds nothing to report.
    mutating func publish(
        version: Int,
        rateHz: Double,
        on brokers: FleetBrokers,
        board: FleetStatusBoard,
        bench: FleetConvergence
    ) async throws -> UInt64 {
        if case .mosquitto(let broker) = brokers.running {
            return try await publish(version: version, rateHz: rateHz, broker: broker)
        }
        let devices = brokers.replicatesRetainedMessages ? [] : ["--devices", devicesFile]
        // --timeout 60: with 300 agents on NATS, JetStream held the tool's subscription barrier (a QoS 1 message it
        // stores) past 20 s on the shared 2-core machine (27 Nov); the wait is the tool's, counted in its own row.
        let runner = ProcessRunner(
            executable: bench.agent,
            arguments: ["fleet", "set", "--fleet"] + brokers.operatorArguments + ["--timeout", "60", "--wait", "0"]
                + devices + ["streams.accelerometer.rate_hz=\(rateHz)"]
        )
        let spawned = BenchmarkClock.nanoseconds()
        try runner.start()
        let code = await runner.waitForExit(timeout: 150)
        let exited = BenchmarkClock.nanoseconds()
        guard code == 0 else {
            runner.kill()
            throw ValidationError(
                "motion-agent fleet set \(code.map { "exited with \($0)" } ?? "did not finish within 150 s"): "
                    + runner.standardOutput + runner.standardError
            )
        }
        // The tool has seen its own document come back from every node before exiting, so the bench's copies are
        // in or about to be.
        let deadline = exited + 10_000_000_000
        while true {
            let copies = board.arrivals(from: spawned, to: .max).filter { $0.topic == TopicScheme.fleetDesired }
            if let first = copies.first {
                tool.append(
                    (version, Double(first.receivedNanoseconds - spawned) / 1e6, Double(exited - spawned) / 1e6)
                )
                return first.receivedNanoseconds
            }
            guard BenchmarkClock.nanoseconds() < deadline else {
                throw ValidationError(
                    "no node delivered fleet v\(version) to the bench within 10 s of motion-agent fleet set's exit: "
                        + runner.standardOutput
                )
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The tool's own time per publish (none on mosquitto).
    var rows: [BenchRow] {
        guard !tool.isEmpty else { return [] }
        return [
            BenchRow(
                name: "fleet set: spawn → document first heard, → exit (ms)",
                value: tool.map { String(format: "v%d %.0f, %.0f", $0.version, $0.heard, $0.exited) }
                    .joined(separator: "; ")
            )
        ]
    }

    private func publish(version: Int, rateHz: Double, broker: MosquittoBroker) async throws -> UInt64 {
        let document = #"{"version": \#(version), "streams": {"accelerometer": {"rate_hz": \#(rateHz)}}}"#
        let start = BenchmarkClock.nanoseconds()
        let runner = ProcessRunner(
            executable: "/usr/bin/mosquitto_pub",
            arguments: [
                "-h", broker.host, "-p", "\(broker.port)", "-q", "1", "-r", "-t", "motion/fleet/desired",
                "-m", document,
            ]
        )
        try runner.start()
        let code = await runner.waitForExit(timeout: 60)
        guard code == 0 else {
            runner.kill()
            throw ValidationError(
                "mosquitto_pub \(code.map { "exited with \($0)" } ?? "did not finish within 60 s"): \(runner.standardError)"
            )
        }
        return start
    }
}
