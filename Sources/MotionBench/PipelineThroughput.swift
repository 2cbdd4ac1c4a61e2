import AgentConfig
import AgentCore
import ArgumentParser
import CBenchSupport
import Foundation
import Logging
import MotionModel
import Simulation
import Synchronization

/// Samples per second through SensorHub → the default streams (StreamCatalog, default configuration) →
/// encoders → Outbox, drained by a consumer that only pops; and heap allocations per sample on the hot
/// (ingesting) thread in steady state.
struct PipelineThroughput: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline",
        abstract: "Samples/s through hub → default streams → encoders → outbox (null consumer); allocations per sample."
    )

    @Option(help: "Samples per timed repetition.") var samples = 200_000
    @Option(help: "Timed repetitions; the median rate is reported.") var repetitions = 5
    @Option(help: "Input rate of the simulated samples, Hz (the default streams plan the source at 100 Hz).")
    var rate = 100.0

    func run() throws {
        let rows = try Self.measure(samples: samples, repetitions: repetitions, rateHz: rate)
        BenchRow.printTable("Pipeline (\(repetitions) × \(samples) samples at \(rate) Hz, default streams)", rows)
    }

    /// A stop flag shared with the drain thread.
    final class Flag: Sendable {
        let value = Atomic<Bool>(true)
    }

    static func measure(samples: Int, repetitions: Int, rateHz: Double) throws -> [BenchRow] {
        var configuration = AgentConfiguration()
        configuration.device.id = "bench"
        configuration.control.persist = false
        var logger = Logger(label: "motion-bench.pipeline")
        logger.logLevel = .warning
        let topics = TopicScheme(root: configuration.resolvedTopicRoot)
        let table = TopicTable()
        let outbox = Outbox(capacityBytes: 4 << 20)
        let hub = SensorHub(outbox: outbox)
        let source = try SimulatedSensorSource(scenario: .walking, rateHz: rateHz, logger: logger)
        let catalog = StreamCatalog(configuration: configuration, topics: topics, topicTable: table, declinationDegrees: nil)
        let controller = AgentController(
            configuration: configuration, source: source, hub: hub, topics: topics, topicTable: table,
            streamFactory: { catalog.make($0, $1) }, logger: logger)
        try controller.start()
        let status = controller.status(state: .online, reason: nil, bootCount: 0)
        let active = (status.streams ?? [:]).filter { $0.value.rateHz > 0 }
            .map { "\($0.key)@\(Int($0.value.rateHz))" }.sorted().joined(separator: " ")

        // One simulated walk, replayed lap after lap with timestamps continuing.
        let lapSamples = min(samples, 60_000)
        let recording = SimulatedRecording(
            imu: SimulatedIMU(scenario: .walking, seed: 5, nominalRateHz: rateHz), rateHz: rateHz,
            duration: Double(lapSamples - 1) / rateHz)
        let lap = Array(recording.map(\.sample))
        let lapSeconds = Double(lap.count) / rateHz

        let running = Flag()
        let drain = Thread {
            while running.value.load(ordering: .relaxed) {
                _ = outbox.withOldest(timeout: 0.05) { _ in .published }
            }
        }
        drain.start()

        var offset = 0.0
        var index = 0
        func feed(_ n: Int) {
            for _ in 0..<n {
                var sample = lap[index]
                sample.timestamp += offset
                hub.ingest(sample)
                index += 1
                if index == lap.count {
                    index = 0
                    offset += lapSeconds
                }
            }
        }

        // Warm-up: estimators converge, buffers and lazily built state settle.
        feed(min(samples, 20_000))
        var rates: [Double] = []
        let before = outbox.snapshot
        let threadAllocationsBefore = bench_alloc_thread()
        let allAllocationsBefore = bench_alloc_total()
        for _ in 0..<max(1, repetitions) {
            let start = bench_monotonic_ns()
            feed(samples)
            rates.append(Double(samples) / (Double(bench_monotonic_ns() - start) / 1e9))
        }
        let threadAllocations = bench_alloc_thread() - threadAllocationsBefore
        let allAllocations = bench_alloc_total() - allAllocationsBefore
        running.value.store(false, ordering: .relaxed)
        outbox.wake()
        while !outbox.isEmpty { usleep(1000) }
        let after = outbox.snapshot
        let total = Double(samples * max(1, repetitions))
        let perSample = Double(threadAllocations) / total
        let messages = Double(after.enqueued - before.enqueued)
        return [
            BenchRow(name: "pipeline streams (name@Hz)", value: active),
            BenchRow(name: "pipeline throughput", value: String(format: "%.0f samples/s", Statistics.median(rates)),
                     target: String(format: "runs %@", rates.map { String(format: "%.0f", $0) }.joined(separator: " "))),
            BenchRow(name: "pipeline messages per sample", value: String(format: "%.3f", messages / total),
                     target: "dropped \(after.droppedOverflow - before.droppedOverflow)"),
            BenchRow(name: "allocations per sample (hot thread)", value: String(format: "%.4f", perSample),
                     target: "0", met: threadAllocations == 0),
            BenchRow(name: "allocations per sample (whole process)", value: String(format: "%.4f", Double(allAllocations) / total)),
        ]
    }
}
