import AgentConfig
import AgentPipeline
import AgentPorts
import AgentRuntime
import ArgumentParser
import CBenchSupport
import Foundation
import Logging
import MotionModel
import MotionWire
import Simulation
import SparkplugB
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
    @Flag(
        help:
            "Print the stack of every allocation on the hot thread during the timed runs (module+offset, for addr2line)."
    )
    var traceAllocations = false
    @Flag(
        help:
            "Set a reference attitude, so device motion also computes and encodes relativeAttitude (set-reference-attitude)."
    )
    var referenceAttitude = false
    @Option(
        help:
            "Pack the sample streams' samples N to a message in the binary batch layout (device motion: version 2), instead of one JSON message each (0: unbatched)."
    )
    var binaryBatch = 0
    @Flag(
        help:
            "Sparkplug on (sparkplug.enabled, every stream Sparkplug can carry): the streams also feed the Sparkplug lane, drained by a second null consumer."
    )
    var sparkplug = false

    func run() throws {
        let rows = try Self.measure(
            samples: samples,
            repetitions: repetitions,
            rateHz: rate,
            traceAllocations: traceAllocations,
            referenceAttitude: referenceAttitude,
            binaryBatch: binaryBatch,
            sparkplug: sparkplug
        )
        var streams = referenceAttitude ? "default streams, a reference attitude set" : "default streams"
        if binaryBatch > 1 { streams += ", binary batches of \(binaryBatch)" }
        if sparkplug { streams += ", Sparkplug on" }
        BenchRow.printTable("Pipeline (\(repetitions) × \(samples) samples at \(rate) Hz, \(streams))", rows)
    }

    /// A stop flag shared with the drain thread.
    final class StopFlag: Sendable {
        let value = Atomic<Bool>(true)
    }

    static func measure(
        samples: Int,
        repetitions: Int,
        rateHz: Double,
        traceAllocations: Bool = false,
        referenceAttitude: Bool = false,
        binaryBatch: Int = 0,
        sparkplug: Bool = false
    ) throws -> [BenchRow] {
        var configuration = AgentConfiguration()
        configuration.device.id = "bench"
        configuration.control.persist = false
        if referenceAttitude {
            configuration.deviceMotion.referenceAttitude = Quaternion(roll: 0.2, pitch: -0.4, yaw: 1.1)
        }
        if binaryBatch > 1 {
            for name in [StreamName.accelerometer, .gyroscope, .magnetometer, .deviceMotion] {
                configuration.streams[name]?.batch = binaryBatch
                configuration.streams[name]?.encoding = .binary
            }
        }
        var logger = Logger(label: "motion-bench.pipeline")
        logger.logLevel = .warning
        let source = try SimulatedSensorSource(scenario: .walking, rateHz: rateHz, logger: logger)
        var options = Pipeline.Options()
        options.outboxBytes = 4 << 20
        let lane =
            sparkplug ? SparkplugLane(catalog: try MotionSparkplug.catalog(streams: MotionSparkplug.streams)) : nil
        options.sparkplug = lane
        let fixed = configuration
        // The agent's own pipeline, as AgentBuilder wires it.
        let pipeline = Pipeline(configuration: { fixed }, source: source, options: options, logger: logger)
        let (outbox, hub, controller) = (pipeline.outbox, pipeline.hub, pipeline.controller)
        try controller.start()
        let status = controller.status(state: .online, reason: nil, bootCount: 0)
        let active = (status.streams ?? [:]).filter { $0.value.rateHz > 0 }
            .map { "\($0.key)@\(Int($0.value.rateHz))" }.sorted().joined(separator: " ")

        // One simulated walk, replayed lap after lap with timestamps continuing.
        let lapSamples = min(samples, 60_000)
        let recording = SimulatedRecording(
            imu: SimulatedIMU(scenario: .walking, seed: 5, nominalRateHz: rateHz),
            rateHz: rateHz,
            duration: Double(lapSamples - 1) / rateHz
        )
        let lap = Array(recording.map(\.sample))
        let lapSeconds = Double(lap.count) / rateHz

        let running = StopFlag()
        let drain = Thread {
            while running.value.load(ordering: .relaxed) {
                _ = outbox.withOldest(timeout: 0.05) { _ in .published }
            }
        }
        drain.start()
        let sparkplugDrain = Thread {
            while running.value.load(ordering: .relaxed) {
                guard let lane else { return }
                _ = lane.outbox.withOldest(timeout: 0.05) { _ in .published }
            }
        }
        sparkplugDrain.start()

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

        // The counter must see allocations at all, or a zero below would prove nothing.
        let probeBefore = bench_alloc_thread()
        let probe = [Int](repeating: Int(rateHz), count: 1000 + Int(rateHz))
        let probeAllocations = bench_alloc_thread() - probeBefore
        guard probeAllocations > 0, probe.count > 0 else {
            throw ValidationError(
                "the allocation counter saw no allocation for a new array — the malloc hook is not active"
            )
        }

        // Warm-up: estimators converge, buffers and lazily built state settle.
        feed(min(samples, 20_000))
        var rates: [Double] = []
        rates.reserveCapacity(max(1, repetitions))  // the bench's own bookkeeping must not count
        let before = outbox.snapshot
        let laneBefore = lane?.outbox.snapshot
        let threadAllocationsBefore = bench_alloc_thread()
        let allAllocationsBefore = bench_alloc_total()
        if traceAllocations { bench_alloc_trace(1) }
        for _ in 0..<max(1, repetitions) {
            let start = bench_monotonic_ns()
            feed(samples)
            rates.append(Double(samples) / (Double(bench_monotonic_ns() - start) / 1e9))
        }
        bench_alloc_trace(0)
        let threadAllocations = bench_alloc_thread() - threadAllocationsBefore
        let allAllocations = bench_alloc_total() - allAllocationsBefore
        // Drain what is left before stopping the consumer (the counters below include it).
        while !outbox.isEmpty || !(lane?.outbox.isEmpty ?? true) { usleep(1000) }
        running.value.store(false, ordering: .relaxed)
        outbox.wake()
        lane?.outbox.wake()
        let after = outbox.snapshot
        let laneAfter = lane?.outbox.snapshot
        let total = Double(samples * max(1, repetitions))
        let perSample = Double(threadAllocations) / total
        let messages = Double(after.enqueued - before.enqueued)
        var sparkplugRows: [BenchRow] = []
        if let laneBefore, let laneAfter {
            sparkplugRows.append(
                BenchRow(
                    name: "Sparkplug DDATA per sample",
                    value: String(format: "%.3f", Double(laneAfter.enqueued - laneBefore.enqueued) / total),
                    target: "dropped \(laneAfter.droppedOverflow - laneBefore.droppedOverflow)"
                )
            )
        }
        return [
            BenchRow(name: "pipeline streams (name@Hz)", value: active),
            BenchRow(
                name: "pipeline throughput",
                value: String(format: "%.0f samples/s", Statistics.median(rates)),
                target: String(format: "runs %@", rates.map { String(format: "%.0f", $0) }.joined(separator: " "))
            ),
            BenchRow(
                name: "pipeline messages per sample",
                value: String(format: "%.3f", messages / total),
                target: "dropped \(after.droppedOverflow - before.droppedOverflow)"
            ),
        ] + sparkplugRows + [
            BenchRow(
                name: "allocations per sample (hot thread)",
                value: String(format: "%.6f", perSample),
                target: "0 (\(threadAllocations) in \(Int(total)) samples)",
                met: threadAllocations == 0
            ),
            BenchRow(
                name: "allocations per sample (whole process)",
                value: String(format: "%.6f", Double(allAllocations) / total),
                target: "\(allAllocations) in \(Int(total)) samples"
            ),
        ]
    }
}
