import ArgumentParser
import CBenchSupport
import Foundation
import MotionModel
import MotionWire
import SparkplugB
import SwiftProtobuf

/// What one sample costs to encode as Sparkplug B DDATA against the agent's native encodings — JSON and the
/// binary batch — in time, heap allocations (CBenchSupport's counting malloc, this thread) and payload bytes,
/// for device motion and the accelerometer. Sparkplug is measured twice: the hand-written encoder the agent
/// uses on the per-sample path (`SparkplugDeviceWriter` + `SparkplugStamp`, into reused buffers) and the same
/// message built with swift-protobuf's generated types, which is what the hand-written one replaces.
struct SparkplugEncodingCost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sparkplug",
        abstract: "Sparkplug B DDATA per sample vs JSON and binary batches: ns, allocations, bytes."
    )

    @Option(help: "Samples per timed repetition.") var samples = 100_000
    @Option(help: "Timed repetitions; the median is reported.") var repetitions = 5
    @Option(help: "Samples per message for the batched rows (binary batch, Sparkplug DDATA).") var batch = 25
    @Option(
        help:
            "Only the rows whose label contains this text, e.g. \"device-motion: Sparkplug DDATA, 1 \" (for callgrind: instructions per sample are the difference of two runs with different --samples)."
    )
    var only: String?

    private func wanted(_ label: String) -> Bool { only.map { label.contains($0) } ?? true }

    func run() throws {
        let motions = Self.deviceMotions(count: 4096)
        let accelerations = motions.map(\.userAcceleration)
        var rows: [BenchRow] = []
        for (stream, kind) in [
            ("device-motion", BinaryBatchLayout.Kind.deviceMotion), ("accelerometer", .accelerometer),
        ] {
            let payloads: [StreamPayload] =
                stream == "device-motion" ? motions.map { .deviceMotion($0) } : accelerations.map { .acceleration($0) }
            rows += try measure(stream: stream, kind: kind, payloads: payloads)
        }
        BenchRow.printTable(
            "Encoding cost per sample (\(repetitions) × \(samples) samples, batches of \(batch); bytes are payload bytes)",
            rows
        )
    }

    /// A walk-like sequence where every value moves each sample, as device motion's do at 50 Hz.
    static func deviceMotions(count: Int) -> [DeviceMotion] {
        (0..<count).map { i in
            let t = Double(i) / 50
            let attitude = Quaternion(roll: 0.2 * sin(t * 3.1), pitch: 0.1 * sin(t * 2.3) - 0.3, yaw: 0.5 * t)
            var motion = DeviceMotion(
                timestamp: 1000 + t,
                attitude: attitude,
                rotationRate: Vector3(x: 0.6 * cos(t * 3.1), y: 0.23 * cos(t * 2.3), z: 0.5),
                gravity: Vector3(x: 0.1 * sin(t), y: -0.29, z: -0.95),
                userAcceleration: Vector3(x: 0.05 * sin(t * 11), y: 0.08 * cos(t * 11), z: 0.21 * sin(t * 22)),
                magneticField: Vector3(x: 16 + sin(t), y: 8.1 - cos(t), z: -46.6),
                magneticFieldAccuracy: .high,
                heading: (28.6 * t).truncatingRemainder(dividingBy: 360),
                referenceFrame: .xMagneticNorthZVertical,
                inclinationAccuracy: 0.4 + 0.01 * sin(t),
                headingAccuracy: 0.6 + 0.02 * cos(t)
            )
            motion.relativeAttitude = nil
            return motion
        }
    }

    private struct Run {
        var nanoseconds: [Double] = []
        var allocations: UInt64 = 0
        var bytes = 0
        var messages = 0
    }

    /// Times `body(i)` for every sample of every repetition, after a warm-up lap; counts this thread's
    /// allocations and what `body` reports as bytes written and messages finished.
    private func time(_ body: (Int) throws -> (bytes: Int, messages: Int)) rethrows -> Run {
        for i in 0..<min(samples, 10_000) { _ = try body(i) }
        var run = Run()
        run.nanoseconds.reserveCapacity(repetitions)
        let before = bench_alloc_thread()
        for _ in 0..<max(1, repetitions) {
            let start = bench_monotonic_ns()
            for i in 0..<samples {
                let (bytes, messages) = try body(i)
                run.bytes &+= bytes
                run.messages &+= messages
            }
            run.nanoseconds.append(Double(bench_monotonic_ns() - start) / Double(samples))
        }
        run.allocations = bench_alloc_thread() - before
        return run
    }

    private func rows(_ label: String, _ run: Run, target: String = "") -> [BenchRow] {
        let total = Double(samples * max(1, repetitions))
        return [
            BenchRow(
                name: label,
                value: String(format: "%.0f ns", Statistics.median(run.nanoseconds)),
                target: String(
                    format: "fastest %.0f ns; %.1f B/sample, %.0f B/message, %.4f allocations/sample%@",
                    run.nanoseconds.min() ?? 0,
                    Double(run.bytes) / total,
                    Double(run.bytes) / Double(max(1, run.messages)),
                    Double(run.allocations) / total,
                    target
                ),
                met: target.isEmpty ? nil : run.allocations == 0
            )
        ]
    }

    private func measure(stream: String, kind: BinaryBatchLayout.Kind, payloads: [StreamPayload]) throws -> [BenchRow] {
        let n = payloads.count
        let time0 = 1_795_241_134.0
        func envelope(_ i: Int) -> MessageEnvelope {
            MessageEnvelope(seq: UInt64(i + 1), timestamp: 1000 + Double(i) / 50, time: time0 + Double(i) / 50)
        }
        var result: [BenchRow] = []

        // JSON, one message per sample (the default).
        var json = JSONBuffer(capacity: 4096)
        if wanted("\(stream): JSON, 1 per message") {
            let jsonRun = time { i in
                PayloadEncoder.encode(envelope(i), payloads[i % n], into: &json)
                return (json.count, 1)
            }
            result += rows("\(stream): JSON, 1 per message", jsonRun)
        }

        // The binary batch, `batch` samples per message.
        var binary = BinaryBatchWriter(kind: kind)
        binary.reserve(records: batch)
        let batchSize = batch
        if wanted("\(stream): binary batch, \(batch) per message") {
            let binaryRun = time { i in
                binary.append(envelope(i), payloads[i % n])
                guard binary.count == batchSize else { return (0, 0) }
                let bytes = binary.withBytes { $0.count }
                binary.clear()
                return (bytes, 1)
            }
            result += rows("\(stream): binary batch, \(batch) per message", binaryRun)
        }

        // Sparkplug DDATA, hand-encoded into reused buffers, 1 and `batch` samples per message.
        let catalog = try MotionSparkplug.catalog(streams: [stream])
        guard let device = catalog.deviceIndex(of: stream) else { throw ValidationError("no \(stream) device") }
        for perMessage in [1, batch] where wanted("\(stream): Sparkplug DDATA, \(perMessage) per message") {
            var writer = SparkplugDeviceWriter(catalog: catalog, device: device, capacity: 8192)
            var out: [UInt8] = []
            out.reserveCapacity(8192)
            var sequence = SparkplugSequence()
            _ = sequence.next(for: .nodeBirth)
            var pending = 0
            let run = try time { i in
                let t = MotionSparkplug.milliseconds(time0 + Double(i) / 50)
                switch payloads[i % n] {
                case .deviceMotion(let m): writer.record(deviceMotion: m, timeMs: t)
                case .acceleration(let v): writer.record(acceleration: v, timeMs: t)
                default: break
                }
                writer.appendChanges()
                pending += 1
                guard pending == perMessage else { return (0, 0) }
                pending = 0
                try SparkplugStamp.finish(
                    body: writer.body,
                    timestampMs: t,
                    seq: sequence.next(for: .deviceData),
                    historical: false,
                    into: &out
                )
                writer.reset()
                return (out.count, 1)
            }
            result += rows("\(stream): Sparkplug DDATA, \(perMessage) per message", run, target: " (target 0)")
        }

        // The same DDATA through swift-protobuf's generated types: what the hand-written encoder replaces.
        let base = catalog.aliasBase(ofDevice: device)
        guard wanted("\(stream): Sparkplug DDATA via swift-protobuf, 1 per message") else { return result }
        var values = SparkplugDeviceWriter(catalog: catalog, device: device)
        let protobufRun = try time { i in
            let t = MotionSparkplug.milliseconds(time0 + Double(i) / 50)
            switch payloads[i % n] {
            case .deviceMotion(let m): values.record(deviceMotion: m, timeMs: t)
            case .acceleration(let v): values.record(acceleration: v, timeMs: t)
            default: break
            }
            var payload = SparkplugPayload()
            payload.timestamp = t
            payload.seq = UInt64(i % 256)
            for (index, value) in values.values.enumerated() where value != .null {
                var metric = SparkplugPayload.Metric()
                metric.alias = base + UInt64(index)
                metric.timestamp = values.timestampsMs[index]
                SparkplugBirthEncoder.setValue(value, on: &metric)
                payload.metrics.append(metric)
            }
            let bytes: [UInt8] = try payload.serializedBytes()
            return (bytes.count, 1)
        }
        result += rows("\(stream): Sparkplug DDATA via swift-protobuf, 1 per message", protobufRun)
        return result
    }
}
