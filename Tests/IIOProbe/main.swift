// A test-only program that runs IIOSensors against whatever IIO context it is given — in the tests, the fake
// IIO tree that Sources/Harness/FakeIIOTree/fake_iio.py builds in a private mount namespace (which a multi-threaded
// test process cannot enter itself). It prints tab-separated lines the tests parse:
//
//   IIOProbe list [--uri URI] [--override DEVICE[/SENSOR]=MATRIX]...
//     device  <id>  name=…  sensors=…  rates=…  current=…  buffered=0|1  trigger=…  clock=…  matrix.<sensor>=…
//     channel <device> <id>  quantity=…  axis=…  scale=…  offset=…  format=…
//     hasIMU  0|1
//   IIOProbe capture [--uri URI] --plan ID=RATE:sensor,sensor… [--want acc=N,gyro=N,mag=N,baro=N]
//                    [--recoveries N] [--max-seconds S] [--override …] [--replan-after N --plan2 ID=RATE:…]
//                    [--show FILE]…   (prints `file <path> <content>` before stopping)
//                    [--refill-timeout S]   (default 3: how long a silent device may stay silent)
//                    [--quiet 1] [--duration S]   (benchmark: count only, run S seconds after a 2 s warm-up,
//                    print `cpu …` with the heap allocations over the run and the accelerometer's sample
//                    intervals: rate, mean, standard deviation, 99th percentile and maximum)
//     sample  <timestamp>  acc=x,y,z  gyro=…  mag=…  p=…  t=…
//     fault   <device>  recovered=0|1  <message>
//     status  <id>  state=…  rate=…  samples=…  nonfinite=…  saturated=…  backwards=…  errors=…  recoveries=…
// Exit status 0 when the wanted samples (and recoveries) arrived in time, 1 otherwise.
import AgentPorts
import CBenchSupport
import Foundation
import IIOSensors
import Logging
import MotionModel
import Synchronization

struct Arguments {
    var command = "list"
    var uri = "local:"
    var plans: [String] = []
    var plans2: [String] = []
    var want: [String: Int] = [:]
    var recoveries = 0
    var maxSeconds = 20.0
    var overrides: [MountMatrixOverride] = []
    var replanAfter: Int?
    var show: [String] = []
    var quiet = false
    /// Seconds a refill may wait before the device counts as failing; generous by default so a loaded CI
    /// machine does not produce spurious faults.
    var refillTimeout = 3.0
    var duration: Double?

    init(_ argv: [String]) {
        var it = argv.makeIterator()
        if let first = it.next() { command = first }
        while let arg = it.next() {
            let value = it.next() ?? ""
            switch arg {
            case "--uri": uri = value
            case "--plan": plans.append(value)
            case "--plan2": plans2.append(value)
            case "--recoveries": recoveries = Int(value) ?? 0
            case "--max-seconds": maxSeconds = Double(value) ?? 20
            case "--replan-after": replanAfter = Int(value)
            case "--show": show.append(value)
            case "--quiet": quiet = value == "1"
            case "--refill-timeout": refillTimeout = Double(value) ?? 3
            case "--duration": duration = Double(value)
            case "--want":
                for pair in value.split(separator: ",") {
                    let kv = pair.split(separator: "=")
                    if kv.count == 2 { want[String(kv[0])] = Int(kv[1]) ?? 0 }
                }
            case "--override":
                let kv = value.split(separator: "=", maxSplits: 1)
                let target = kv[0].split(separator: "/")
                guard kv.count == 2, let matrix = MountMatrix(parsing: String(kv[1])) else {
                    fatalError("bad --override \(value)")
                }
                overrides.append(
                    MountMatrixOverride(
                        device: String(target[0]),
                        sensor: target.count > 1 ? SensorType(rawValue: String(target[1])) : nil,
                        matrix: matrix
                    )
                )
            default: fatalError("unknown argument \(arg)")
            }
        }
    }
}

func parsePlan(_ specs: [String]) -> AcquisitionPlan {
    var plan = AcquisitionPlan()
    for spec in specs {
        let idRest = spec.split(separator: "=", maxSplits: 1)
        let rateSensors = idRest[1].split(separator: ":", maxSplits: 1)
        let sensors =
            rateSensors.count > 1
            ? Set(rateSensors[1].split(separator: ",").compactMap { SensorType(rawValue: String($0)) }) : []
        plan.devices[String(idRest[0])] = DevicePlan(rateHz: Double(rateSensors[0]) ?? 0, sensors: sensors)
    }
    return plan
}

func vector(_ v: Vector3) -> String { "\(v.x),\(v.y),\(v.z)" }

final class ProbeSink: SampleSink {
    let quiet: Bool
    init(quiet: Bool) { self.quiet = quiet }

    struct Counts {
        var acc = 0, gyro = 0, mag = 0, baro = 0, recovered = 0, total = 0
    }

    /// The accelerometer's sample intervals (benchmark mode), in room reserved up front: recording one
    /// allocates nothing.
    struct Intervals {
        var last = -Double.infinity
        var seconds = ContiguousArray<Double>()
    }

    let counts = Mutex(Counts())
    let intervals: Mutex<Intervals> = {
        var i = Intervals()
        i.seconds.reserveCapacity(1 << 20)
        return Mutex(i)
    }()
    let output = Mutex(())

    func emit(_ line: String) {
        output.withLock { _ in
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }

    func ingest(_ sample: IMUSample) {
        if quiet {
            counts.withLock { $0.total += 1 }
            if sample.acceleration != nil {
                intervals.withLock { i in
                    if i.last.isFinite && i.seconds.count < i.seconds.capacity {
                        i.seconds.append(sample.timestamp - i.last)
                    }
                    i.last = sample.timestamp
                }
            }
            return
        }
        var fields = ["sample", "\(sample.timestamp)"]
        if let a = sample.acceleration { fields.append("acc=\(vector(a))") }
        if let g = sample.rotationRate { fields.append("gyro=\(vector(g))") }
        if let m = sample.magneticField { fields.append("mag=\(vector(m))") }
        if let p = sample.pressureKPa { fields.append("p=\(p)") }
        if let t = sample.temperatureC { fields.append("t=\(t)") }
        emit(fields.joined(separator: "\t"))
        counts.withLock { c in
            c.total += 1
            if sample.acceleration != nil { c.acc += 1 }
            if sample.rotationRate != nil { c.gyro += 1 }
            if sample.magneticField != nil { c.mag += 1 }
            if sample.pressureKPa != nil { c.baro += 1 }
        }
    }

    func report(_ fault: SourceFault) {
        emit("fault\t\(fault.deviceID)\trecovered=\(fault.recovered ? 1 : 0)\t\(fault.message)")
        if fault.recovered { counts.withLock { $0.recovered += 1 } }
    }
}

func list(_ args: Arguments) throws {
    for device in try IIODiscovery.devices(uri: args.uri, mountMatrixOverrides: args.overrides) {
        var fields = [
            "device", device.id, "name=\(device.name)",
            "sensors=\(device.sensors.map(\.rawValue).sorted().joined(separator: ","))",
            "rates=\(device.supportedRates)",
            "current=\(device.currentRateHz.map { "\($0)" } ?? "-")",
            "buffered=\(device.isBuffered ? 1 : 0)",
            "trigger=\(device.trigger ?? "-")",
            "clock=\(device.timestampClock ?? "-")",
        ]
        for (sensor, matrix) in device.mountMatrices.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            fields.append("matrix.\(sensor.rawValue)=\(matrix)")
            fields.append("source.\(sensor.rawValue)=\(device.mountMatrixSources[sensor] ?? "-")")
        }
        print(fields.joined(separator: "\t"))
        for channel in device.channels {
            print(
                [
                    "channel", device.id, channel.id, "quantity=\(channel.quantity.rawValue)",
                    "axis=\(channel.axis.map(String.init) ?? "-")", "scale=\(channel.scale)",
                    "offset=\(channel.offset)", "format=\(channel.scanFormat ?? "-")",
                ].joined(separator: "\t")
            )
        }
    }
    print("hasIMU\t\(IIODiscovery.hasIMU(uri: args.uri) ? 1 : 0)")
}

/// User + system CPU seconds of this process so far.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) * 1e-6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) * 1e-6
}

func capture(_ args: Arguments) async throws -> Bool {
    var logger = Logger(label: "iio-probe")
    logger.logLevel = .warning
    let source = try IIOSensorSource(
        uri: args.uri,
        mountMatrixOverrides: args.overrides,
        retryPolicy: IIORetryPolicy(initialDelay: 0.2, maximumDelay: 0.5, minimumRefillTimeout: args.refillTimeout),
        logger: logger
    )
    try source.apply(parsePlan(args.plans))
    let sink = ProbeSink(quiet: args.quiet)
    let run = Task { try await source.run(into: sink) }
    let start = Date()
    var replanned = false
    func satisfied(_ c: ProbeSink.Counts) -> Bool {
        c.acc >= args.want["acc", default: 0] && c.gyro >= args.want["gyro", default: 0]
            && c.mag >= args.want["mag", default: 0] && c.baro >= args.want["baro", default: 0]
            && c.recovered >= args.recoveries
    }
    var ok = false
    if let duration = args.duration {
        // Benchmark mode: acquire for a fixed time after a warm-up (contexts opened, rates written, buffers or
        // files set up) and report the process's CPU use and heap allocations over it, and how evenly the
        // accelerometer's samples came.
        try await Task.sleep(for: .seconds(2))
        let cpu0 = cpuSeconds()
        let allocs0 = bench_alloc_total()
        let samples0 = sink.counts.withLock { $0.total }
        sink.intervals.withLock { $0.seconds.removeAll(keepingCapacity: true) }
        let start = Date()
        try await Task.sleep(for: .seconds(duration))
        let cpu = cpuSeconds() - cpu0
        let allocs = bench_alloc_total() - allocs0
        let wall = Date().timeIntervalSince(start)
        let total = sink.counts.withLock { $0.total } - samples0
        let gaps = sink.intervals.withLock { Array($0.seconds) }.sorted()
        var timing = "acc_intervals=0"
        if !gaps.isEmpty {
            let mean = gaps.reduce(0, +) / Double(gaps.count)
            let sd = (gaps.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(gaps.count)).squareRoot()
            let p99 = gaps[min(gaps.count - 1, Int(Double(gaps.count) * 0.99))]
            timing = String(
                format:
                    "acc_rate_hz=%.2f\tinterval_mean_ms=%.3f\tinterval_sd_ms=%.3f\tinterval_p99_ms=%.3f\tinterval_max_ms=%.3f",
                Double(gaps.count) / wall,
                mean * 1000,
                sd * 1000,
                p99 * 1000,
                gaps.last! * 1000
            )
        }
        sink.emit(
            "cpu\t\(cpu)\twall=\(wall)\tsamples=\(total)\tpercent=\(100 * cpu / wall)\tallocations=\(allocs)"
                + "\tallocations_per_sample=\(total > 0 ? Double(allocs) / Double(total) : 0)\t\(timing)"
        )
        run.cancel()
        _ = try? await run.value
        return true
    }
    while Date().timeIntervalSince(start) < args.maxSeconds {
        let counts = sink.counts.withLock { $0 }
        if let after = args.replanAfter, !replanned, counts.total >= after {
            replanned = true
            sink.emit("replan")
            try source.apply(parsePlan(args.plans2))
            sink.counts.withLock { $0 = ProbeSink.Counts() }
            continue
        }
        if (args.replanAfter == nil || replanned) && satisfied(counts) {
            ok = true
            break
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    for path in args.show {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "<missing>"
        sink.emit("file\t\(path)\t\(text.trimmingCharacters(in: .whitespacesAndNewlines.union(["\0"])))")
    }
    run.cancel()
    _ = try? await run.value
    for status in source.status() {
        let c = status.counters
        sink.emit(
            [
                "status", status.id, "state=\(status.state)",
                "rate=\(status.effectiveRateHz.map { "\($0)" } ?? "-")",
                "polled=\(status.polledRateHz.map { "\($0)" } ?? "-")", "samples=\(c.samples)",
                "nonfinite=\(c.nonFinite)", "saturated=\(c.saturated)", "backwards=\(c.timestampsBackwards)",
                "errors=\(c.readErrors)", "recoveries=\(c.recoveries)",
            ].joined(separator: "\t")
        )
    }
    return ok
}

let args = Arguments(Array(CommandLine.arguments.dropFirst()))
do {
    switch args.command {
    case "list":
        try list(args)
    case "capture":
        if try await !capture(args) {
            FileHandle.standardError.write(Data("IIOProbe: the wanted samples did not arrive in time\n".utf8))
            exit(1)
        }
    default:
        FileHandle.standardError.write(Data("IIOProbe: unknown command \(args.command)\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("IIOProbe: \(error)\n".utf8))
    exit(1)
}
