import AgentCore
import ArgumentParser
import CBenchSupport
import Foundation
import MotionModel
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
            time, looping — the replay device offers only its recorded rate, so the input is 1 kHz), or 'both'.
            """
    )
    var input = "both"

    func run() throws {
        let inputs = input == "both" ? ["replay", "simulated"] : [input]
        var rows: [BenchRow] = []
        for i in inputs { rows += try Self.measure(agent: agent, input: i, seconds: seconds) }
        BenchRow.printTable("Realistic load (release motion-agent, \(Int(seconds)) s)", rows)
    }

    static func measure(agent: String, input: String, seconds: Double) throws -> [BenchRow] {
        guard FileManager.default.isExecutableFile(atPath: agent) else {
            throw ValidationError("no executable at \(agent) — build it: swift build -c release --product motion-agent")
        }
        guard input == "simulated" || input == "replay" else {
            throw ValidationError("--input must be simulated, replay or both")
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
        let spawned = bench_monotonic_ns()
        let process = try BenchProcess(agent, ["run", "--config", configPath], output: logPath)
        defer { process.terminate() }
        let pid = process.pid
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
        let wall = Double(bench_monotonic_ns() - wallStart) / 1e9
        let messages = subscriber.count - messagesStart
        let totalCPU = Double(cpuEnd) / ticksPerSecond
        let lifetime = Double(bench_monotonic_ns() - spawned) / 1e9
        let cpu = 100 * Double(cpuEnd - cpuStart) / ticksPerSecond / wall
        let hwm = statusField(pid, "VmHWM:")
        let anonymous = statusField(pid, "RssAnon:")
        let fileBacked = statusField(pid, "RssFile:")
        process.terminate()
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let plan =
            log.split(separator: "\n").filter { $0.contains("sensor device") && $0.contains(" at ") }.last
            .map { line -> String in
                guard let range = line.range(of: "on at ") else { return String(line) }
                return String(line[range.lowerBound...].prefix(24))
            } ?? "?"
        return [
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
