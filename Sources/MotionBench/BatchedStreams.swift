import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Core Motion's batched sensor data (CMBatchedSensorManager) through the release `motion-agent`: a high-rate
/// accelerometer (800 Hz) and device motion (200 Hz), other streams off, published three ways — one JSON
/// message per sample, JSON batches and binary batches ("MAB" v1, docs/payloads.md) — against a local
/// mosquitto. Per stream: broker messages/s, samples/s delivered (decoded from the batches), bytes per message
/// and per sample (payload only, and as MQTT 5 PUBLISH packets), gaps in `seq` and in sample timestamps; per
/// configuration: the agent's and the broker's CPU % of one core.
struct BatchedStreams: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batching",
        abstract: "Messages/s, samples/s, bytes per sample and CPU of 800 Hz / 200 Hz streams, unbatched vs batched."
    )

    @Option(help: "The motion-agent binary (release).") var agent = Settings().agent
    @Option(help: "Accelerometer rate, Hz (at most 1000).") var accelerometerRate = Settings().accelerometerRateHz
    @Option(help: "Device-motion rate, Hz (at most 1000).") var deviceMotionRate = Settings().deviceMotionRateHz
    @Option(help: "Accelerometer samples per batched message.") var accelerometerBatch = Settings().accelerometerBatch
    @Option(help: "Device-motion samples per batched message.") var deviceMotionBatch = Settings().deviceMotionBatch
    @Option(help: "Seconds measured per configuration.") var seconds = Settings().seconds
    @Option(help: "Seconds of settling after the first message of both streams.") var settle = Settings().settle
    @Option(help: "QoS of both streams and of the measuring subscription (0–2).") var qos = Settings().qos
    @Option(help: "Runs of the three configurations (interleaved); each figure is the median.") var runs = 1
    @Option(
        help: """
            Input: 'simulated' (source.simulated.rate_hz = the highest stream rate: the top of the simulator's \
            ladder, so the device runs at exactly that rate) or 'replay' (a 10 s simulated 9-axis walk recorded \
            at that rate, replayed in real time, looping).
            """
    )
    var input = Settings().input

    /// What one measurement runs; the defaults are the issue's example rates with 20 messages/s per stream.
    struct Settings: Sendable {
        var agent = ".build/release/motion-agent"
        var accelerometerRateHz = 800.0
        var deviceMotionRateHz = 200.0
        var accelerometerBatch = 40
        var deviceMotionBatch = 10
        var seconds = 15.0
        var settle = 3.0
        var qos = 0
        var runs = 1
        var input = "simulated"
    }

    func run() async throws {
        let settings = Settings(
            agent: agent,
            accelerometerRateHz: accelerometerRate,
            deviceMotionRateHz: deviceMotionRate,
            accelerometerBatch: accelerometerBatch,
            deviceMotionBatch: deviceMotionBatch,
            seconds: seconds,
            settle: settle,
            qos: qos,
            runs: runs,
            input: input
        )
        let rows = try await Self.measure(settings)
        BenchRow.printTable(
            "Batched streams (release motion-agent, \(input) input, QoS \(qos), \(Int(seconds)) s per configuration, "
                + "\(runs) run\(runs == 1 ? "" : "s"), medians)",
            rows
        )
    }

    /// One way of publishing the streams.
    struct Variant: Sendable {
        var label: String
        var encoding: String
        /// Samples per message, one per measured stream, in order.
        var batches: [Int]
    }

    /// A measured stream: its config key (and topic suffix), binary kind and rate.
    struct StreamSpec: Sendable {
        var name: String
        var kind: UInt8
        var rateHz: Double
    }

    static func measure(_ settings: Settings) async throws -> [BenchRow] {
        try AgentProcess.requireExecutable(settings.agent)
        guard settings.input == "simulated" || settings.input == "replay" else {
            throw ValidationError("--input must be simulated or replay")
        }
        guard (0...2).contains(settings.qos) else { throw ValidationError("--qos must be 0, 1 or 2") }
        // The agent's own limits (streams.<name>.batch and rate_hz in config.yaml).
        guard [settings.accelerometerBatch, settings.deviceMotionBatch].allSatisfy({ (1...1000).contains($0) }) else {
            throw ValidationError("batch sizes must be 1–1000 samples (streams.<name>.batch)")
        }
        guard [settings.accelerometerRateHz, settings.deviceMotionRateHz].allSatisfy({ $0 > 0 && $0 <= 1000 }) else {
            throw ValidationError("stream rates must be above 0 and at most 1000 Hz (streams.<name>.rate_hz)")
        }
        let streams = [
            StreamSpec(name: "accelerometer", kind: 1, rateHz: settings.accelerometerRateHz),
            StreamSpec(name: "device-motion", kind: 4, rateHz: settings.deviceMotionRateHz),
        ]
        let batches = [settings.accelerometerBatch, settings.deviceMotionBatch]
        let label = "N=" + batches.map(String.init).joined(separator: "/")
        let variants = [
            Variant(label: "json N=1", encoding: "json", batches: [1, 1]),
            Variant(label: "json \(label)", encoding: "json", batches: batches),
            Variant(label: "binary \(label)", encoding: "binary", batches: batches),
        ]
        var results = [[RunFigures]](repeating: [], count: variants.count)
        var repeated = [[Double]](repeating: [], count: variants.count)
        for run in 1...max(1, settings.runs) {
            for (index, variant) in variants.enumerated() {
                progress("batching run \(run)/\(max(1, settings.runs)): \(variant.label)")
                var figures = try await measureOnce(variant, streams: streams, settings: settings)
                // Something else on a shared machine may stop the agent mid-window (seen here: a graceful stop,
                // SIGTERM or SIGINT not sent by the bench, 2.8 s in). Such a run measures that, not batching:
                // repeat it, at most twice, and say so in the table. A crash is not repeated: it is reported.
                var retries = 0
                while let ended = figures.agentExitedAfter, figures.agentStoppedGracefully, retries < 2 {
                    retries += 1
                    repeated[index].append(ended)
                    progress("batching run \(run): \(variant.label) again, the agent ended before the window did")
                    figures = try await measureOnce(variant, streams: streams, settings: settings)
                }
                results[index].append(figures)
            }
        }
        var rows: [BenchRow] = []
        for (index, variant) in variants.enumerated() {
            rows += Self.rows(variant, results[index], repeated: repeated[index], streams: streams, qos: settings.qos)
        }
        return rows
    }
}
