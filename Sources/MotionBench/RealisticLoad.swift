import AgentCore
import AgentPorts
import ArgumentParser
import CBenchSupport
import Foundation
import MotionModel
import Recording
import Simulation

#if canImport(Glibc)
import Glibc
#endif

/// The realistic load: the release `motion-agent` binary against a local mosquitto — 9-axis input at 1 kHz;
/// accelerometer, gyroscope and device motion at 100 Hz; pedometer, activity and altimeter on — CPU % of one
/// core and RSS over the run, and the time from process spawn to the first published sample.
struct RealisticLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "CPU %, RSS and start-up time of the release motion-agent under the realistic load."
    )

    @Option(help: "The motion-agent binary (release).") var agent = ".build/release/motion-agent"
    @Option(help: "Seconds measured (after the first sample and 5 s of settling).") var seconds = 60.0
    @Option(
        help: """
            Input: 'simulated' (the simulator with rate_hz 1000; the agent plans the device at the lowest \
            ladder rate serving the streams), 'replay' (a 1 kHz 9-axis simulated recording replayed in real \
            time, looping — the replay device offers only its recorded rate, so the input is 1 kHz), 'iio' \
            (the agent's production path: libiio reading a fake sysfs tree — accelerometer and gyroscope at \
            1 kHz through buffers, a polled magnetometer and barometer; needs root and unshare), 'both' \
            (replay and simulated) or 'all'.
            """
    )
    var input = "both"

    @Option(help: "The fake IIO tree (input 'iio').") var fakeIIO = "Tests/Fixtures/iio/fake_iio.py"

    @Flag(
        help: """
            Start the agent with its binary as the page cache holds it (e.g. just written by the build) instead \
            of evicting it first; the RSS then depends on how the file entered the cache.
            """
    )
    var warmPageCache = false

    func run() throws {
        let inputs = Self.inputs(input)
        var rows: [BenchRow] = []
        for i in inputs {
            rows += try Self.measure(
                agent: agent,
                input: i,
                seconds: seconds,
                fakeIIO: fakeIIO,
                coldStart: !warmPageCache
            )
        }
        BenchRow.printTable("Realistic load (release motion-agent, \(Int(seconds)) s)", rows)
    }

    static func measure(
        agent: String,
        input: String,
        seconds: Double,
        fakeIIO: String = "Tests/Fixtures/iio/fake_iio.py",
        coldStart: Bool = true
    ) throws -> [BenchRow] {
        guard FileManager.default.isExecutableFile(atPath: agent) else {
            throw ValidationError("no executable at \(agent) — build it: swift build -c release --product motion-agent")
        }
        guard ["simulated", "replay", "iio"].contains(input) else {
            throw ValidationError("--input must be simulated, replay, iio, both or all")
        }
        if input == "iio" && !FileManager.default.fileExists(atPath: fakeIIO) {
            throw ValidationError("no fake IIO tree at \(fakeIIO) — run from the repository root or pass --fake-iio")
        }
        let broker = try BenchBroker()
        defer { broker.stop() }
        let device = "bench-load"
        let subscriber = try BenchSubscriber(broker: broker, clientID: "bench-load-counter")
        for stream in [
            "accelerometer", "gyroscope", "device-motion", "pedometer", "pedometer/events", "activity", "altimeter",
            "altimeter/absolute",
        ] {
            try subscriber.subscribe("motion/\(device)/\(stream)", qos: 1)
        }
        let source: String
        if input == "replay" {
            let file = broker.directory + "/walk-1khz.csv"
            try writeRecording(to: file, rateHz: 1000, seconds: 10)
            source = """
                  kind: replay
                  replay:
                    file: \(file)
                    speed: realtime
                    loop: true
                """
        } else if input == "iio" {
            try writeIIOSpec(to: broker.directory + "/iio-spec.json", seconds: 10)
            source = """
                  kind: iio
                  iio:
                    uri: "local:"
                """
        } else {
            source = """
                  kind: simulated
                  simulated:
                    scenario: walking
                    rate_hz: 1000
                """
        }
        let configuration = """
            device:
              id: \(device)
            agent:
              state_dir: \(broker.directory)/state
              log_level: info
            source:
            \(source)
            mqtt:
              host: 127.0.0.1
              port: \(broker.port)
            control:
              persist: false
            streams:
              accelerometer: {enabled: true, rate_hz: 100, qos: 0, retain: false}
              gyroscope: {enabled: true, rate_hz: 100, qos: 0, retain: false}
              magnetometer: {enabled: false, rate_hz: 25, qos: 0, retain: false}
              device-motion: {enabled: true, rate_hz: 100, qos: 0, retain: false, reference_frame: xMagneticNorthZVertical}
              pedometer: {enabled: true, rate_hz: 1, qos: 1, retain: true}
              activity: {enabled: true, rate_hz: 1, qos: 1, retain: true}
              altimeter: {enabled: true, rate_hz: 1, qos: 0, retain: false}
              submersion: {enabled: false, rate_hz: 1, qos: 1, retain: true}
            """
        let configPath = broker.directory + "/config.yaml"
        try FileManager.default.createDirectory(atPath: broker.directory + "/state", withIntermediateDirectories: true)
        try configuration.write(toFile: configPath, atomically: true, encoding: .utf8)
        let logPath = broker.directory + "/agent.log"

        subscriber.reset(recordLatencies: false)
        if coldStart { try evictFromPageCache(agent) }
        let spawned = bench_monotonic_ns()
        let process: BenchProcess
        let pid: pid_t
        if input == "iio" {
            // The agent runs inside the fake tree's private mount namespace, a grandchild of the fake: measure
            // the agent alone (the Python writers feeding the FIFOs are other processes), and stop it by its
            // own pid — the fake does not forward SIGTERM, it ends when its command does.
            process = try BenchProcess(
                "/usr/bin/python3",
                [fakeIIO, broker.directory + "/iio-spec.json", "--", agent, "run", "--config", configPath],
                output: logPath
            )
            pid = try findProcess(arguments: [agent, "run", "--config", configPath], timeout: 30)
        } else {
            process = try BenchProcess(agent, ["run", "--config", configPath], output: logPath)
            pid = process.pid
        }
        defer {
            if input == "iio" { kill(pid, SIGTERM) }
            process.terminate(grace: 10)
        }
        _ = subscriber.wait(for: 1, timeout: 30)
        guard let first = subscriber.firstReceiptNanoseconds else {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw ValidationError("motion-agent published nothing within 30 s; its log:\n\(log)")
        }
        let startup = Double(first - spawned) / 1e6
        Thread.sleep(forTimeInterval: 5)
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let cpuStart = cpuTicks(pid)
        let wallStart = bench_monotonic_ns()
        let messagesStart = subscriber.count
        var maxRSS = 0
        var rss = 0
        while Double(bench_monotonic_ns() - wallStart) / 1e9 < seconds {
            Thread.sleep(forTimeInterval: 1)
            rss = residentKiB(pid)
            maxRSS = max(maxRSS, rss)
        }
        let cpuEnd = cpuTicks(pid)
        guard cpuEnd >= cpuStart, cpuStart > 0 else {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw ValidationError(
                "motion-agent (pid \(pid)) was gone before the end of the measurement; its log:\n\(log)"
            )
        }
        let wall = Double(bench_monotonic_ns() - wallStart) / 1e9
        let messages = subscriber.count - messagesStart
        let totalCPU = Double(cpuEnd) / ticksPerSecond
        let lifetime = Double(bench_monotonic_ns() - spawned) / 1e9
        let cpu = 100 * Double(cpuEnd - cpuStart) / ticksPerSecond / wall
        let hwm = statusField(pid, "VmHWM:")
        let anonymous = statusField(pid, "RssAnon:")
        let fileBacked = statusField(pid, "RssFile:")
        if input == "iio" { kill(pid, SIGTERM) }
        process.terminate(grace: 10)
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        // The last plan of each device: "iio.device=iio:device0 … sensor device on at 1000.0 Hz".
        var plans: [String: String] = [:]
        for line in log.split(separator: "\n") where line.contains("sensor device") && line.contains(" at ") {
            guard let range = line.range(of: "on at ") else { continue }
            let device = line.split(separator: " ").first { $0.hasPrefix("iio.device=") }.map { $0.dropFirst(11) } ?? ""
            plans[String(device)] = String(line[range.lowerBound...].prefix(24)).trimmingCharacters(in: .whitespaces)
        }
        let plan =
            plans.isEmpty
            ? "?"
            : plans.sorted { $0.key < $1.key }.map { plans.count > 1 ? "\($0.key) \($0.value)" : $0.value }
                .joined(separator: ", ")
        return [
            BenchRow(
                name: "load[\(input)] agent binary at start",
                value: coldStart ? "evicted from the page cache (as after boot)" : "as the page cache held it"
            ),
            BenchRow(name: "load[\(input)] device plan (agent log)", value: plan),
            BenchRow(
                name: "load[\(input)] CPU, steady \(Int(wall)) s",
                value: String(format: "%.2f %% of one core", cpu),
                target: "< 3 %",
                met: cpu < 3
            ),
            BenchRow(
                name: "load[\(input)] CPU incl. start-up",
                value: String(format: "%.2f %% (%.2f s over %.1f s)", 100 * totalCPU / lifetime, totalCPU, lifetime)
            ),
            BenchRow(
                name: "load[\(input)] RSS max / at end",
                value: String(format: "%.1f / %.1f MB", Double(maxRSS) / 1024, Double(rss) / 1024),
                target: "< 20 MB",
                met: Double(maxRSS) / 1024 < 20
            ),
            BenchRow(name: "load[\(input)] VmHWM", value: String(format: "%.1f MB", Double(hwm) / 1024)),
            BenchRow(
                name: "load[\(input)] RSS anonymous / file-backed",
                value: String(format: "%.1f / %.1f MB", Double(anonymous) / 1024, Double(fileBacked) / 1024),
                target: "file-backed: shared-library pages"
            ),
            BenchRow(
                name: "load[\(input)] messages/s received",
                value: String(format: "%.1f", Double(messages) / wall)
            ),
            BenchRow(name: "load[\(input)] start-up to first sample", value: String(format: "%.0f ms", startup)),
        ]
    }

    /// The pid of the process whose command line is exactly `arguments`, waiting for it to appear.
    static func findProcess(arguments: [String], timeout: Double) throws -> pid_t {
        let wanted = arguments.joined(separator: "\0") + "\0"
        let deadline = bench_monotonic_ns() + UInt64(timeout * 1e9)
        while bench_monotonic_ns() < deadline {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = Int32(entry),
                    let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                    String(decoding: data, as: UTF8.self) == wanted
                else { continue }
                return pid
            }
            usleep(50_000)
        }
        throw ValidationError("\(arguments.joined(separator: " ")) did not start within \(Int(timeout)) s")
    }

    /// The inputs an `--input` value names: `both` is replay and simulated, `all` adds iio.
    static func inputs(_ input: String) -> [String] {
        switch input {
        case "both": ["replay", "simulated"]
        case "all": ["replay", "iio", "simulated"]
        default: [input]
        }
    }

    /// utime + stime of `pid`, clock ticks (/proc/PID/stat fields 14 and 15).
    static func cpuTicks(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // Fields after the command name start at field 3 (state).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return user + system
    }

    static func residentKiB(_ pid: Int32) -> Int { statusField(pid, "VmRSS:") }

    /// A "kB" field of /proc/PID/status.
    static func statusField(_ pid: Int32, _ name: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// A simulated walk with all four sensors, in the agent's record/replay CSV format.
    /// Drops the agent binary's pages from the page cache, so it starts as on a device after boot: its code read
    /// from storage as it runs. Measured warm instead, one binary's RSS was 19.5 or 20.0 MB depending on how the
    /// file had entered the cache (the linker's or cp's writes, an earlier run's reads): a page fault maps the
    /// cached pages around it, and how many depends on the cache's folio sizes for that file.
    static func evictFromPageCache(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ValidationError("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        // A binary just written has dirty pages, which the kernel writes back before it can drop them.
        let failure = fsync(descriptor) == 0 ? posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED)) : errno
        guard failure == 0 else {
            throw ValidationError(
                "cannot evict \(path) from the page cache: \(String(cString: strerror(failure))) — pass --warm-page-cache"
            )
        }
    }

    static func writeRecording(to path: String, rateHz: Double, seconds: Double) throws {
        var text = RecordingFormat.header + "\n"
        let recording = SimulatedRecording(
            imu: SimulatedIMU(scenario: .walking, seed: 9, nominalRateHz: rateHz),
            rateHz: rateHz,
            duration: seconds
        )
        for (sample, _) in recording { text += RecordingFormat.format(sample) + "\n" }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
