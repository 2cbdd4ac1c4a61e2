import AgentConfig
import AgentPorts
import ArgumentParser
import CBenchSupport
import Foundation
import Harness
import MosquittoTransport

#if canImport(Glibc)
import Glibc
#endif

/// The realistic load: the release `motion-agent` binary against a local mosquitto — 9-axis input at 1 kHz;
/// accelerometer, gyroscope and device motion at 100 Hz; pedometer, activity and altimeter on — CPU % of one
/// core and RSS over the run, and the time from process spawn to the first published sample.
struct RealisticLoad: AsyncParsableCommand {
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

    @Option(help: "The fake IIO tree (input 'iio').") var fakeIIO = "Sources/Harness/FakeIIOTree/fake_iio.py"

    @Flag(
        help: """
            Start the agent with its binary as the page cache holds it (e.g. just written by the build) instead \
            of evicting it first; the RSS then depends on how the file entered the cache.
            """
    )
    var warmPageCache = false

    func run() async throws {
        let inputs = Self.inputs(input)
        var rows: [BenchRow] = []
        for i in inputs {
            rows += try await Self.measure(
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
        fakeIIO: String = "Sources/Harness/FakeIIOTree/fake_iio.py",
        coldStart: Bool = true
    ) async throws -> [BenchRow] {
        try AgentProcess.requireExecutable(agent)
        guard ["simulated", "replay", "iio"].contains(input) else {
            throw ValidationError("--input must be simulated, replay, iio, both or all")
        }
        if input == "iio" && !FileManager.default.fileExists(atPath: fakeIIO) {
            throw ValidationError("no fake IIO tree at \(fakeIIO) — run from the repository root or pass --fake-iio")
        }
        return try await MosquittoBroker.withStarted(options: .benchmark()) { broker in
            try await measure(
                broker,
                agent: agent,
                input: input,
                seconds: seconds,
                fakeIIO: fakeIIO,
                coldStart: coldStart
            )
        }
    }

    private static func measure(
        _ broker: MosquittoBroker,
        agent: String,
        input: String,
        seconds: Double,
        fakeIIO: String,
        coldStart: Bool
    ) async throws -> [BenchRow] {
        let device = "bench-load"
        let subscriber = try BareSubscriber(host: broker.host, port: broker.port, clientID: "bench-load-counter")
        let scheme = TopicScheme(template: TopicSettings().root, device: device)
        let streams: [StreamName] = [.accelerometer, .gyroscope, .deviceMotion, .pedometer, .activity, .altimeter]
        for topic in StreamDescriptor.allTopics where streams.contains(topic.stream) {
            try subscriber.subscribe(scheme.topic(topic.payload), qos: 1)
        }
        let source: BenchAgentConfiguration.Input
        if input == "iio" {
            try writeIIOSpec(to: broker.directory + "/iio-spec.json", seconds: 10)
            source = .iio
        } else {
            source = try BenchAgentConfiguration.input(input, rateHz: 1000, directory: broker.directory)
        }
        let configuration = BenchAgentConfiguration(
            device: device,
            directory: broker.directory,
            port: broker.port,
            input: source,
            streams: [
                .accelerometer: "{enabled: true, rate_hz: 100, qos: 0, retain: false}",
                .gyroscope: "{enabled: true, rate_hz: 100, qos: 0, retain: false}",
                .deviceMotion:
                    "{enabled: true, rate_hz: 100, qos: 0, retain: false, reference_frame: xMagneticNorthZVertical}",
                .pedometer: "{enabled: true, rate_hz: 1, qos: 1, retain: true}",
                .activity: "{enabled: true, rate_hz: 1, qos: 1, retain: true}",
                .altimeter: "{enabled: true, rate_hz: 1, qos: 0, retain: false}",
            ]
        )
        let configPath = try configuration.write()

        subscriber.reset(recordLatencies: false)
        if coldStart { try evictFromPageCache(agent) }
        let spawned = bench_monotonic_ns()
        let process = try AgentProcess(
            agent: agent,
            configPath: configPath,
            fakeIIO: input == "iio" ? (fakeIIO, broker.directory + "/iio-spec.json") : nil
        )
        return try await process.stopping {
            try await measure(
                process,
                subscriber,
                input: input,
                seconds: seconds,
                spawned: spawned,
                coldStart: coldStart
            )
        }
    }

    private static func measure(
        _ process: AgentProcess,
        _ subscriber: BareSubscriber,
        input: String,
        seconds: Double,
        spawned: UInt64,
        coldStart: Bool
    ) async throws -> [BenchRow] {
        let pid = process.pid
        try await process.waitUntil(timeout: 30, "publish anything") { subscriber.firstReceiptNanoseconds != nil }
        let startup = Double((subscriber.firstReceiptNanoseconds ?? spawned) - spawned) / 1e6
        try await Task.sleep(for: .seconds(5))
        let cpuStart = ProcessStatistics.cpuTicks(pid)
        let wallStart = bench_monotonic_ns()
        let messagesStart = subscriber.count
        var maxRSS = 0
        var rss = 0
        while Double(bench_monotonic_ns() - wallStart) / 1e9 < seconds {
            try await Task.sleep(for: .seconds(1))
            rss = ProcessStatistics.residentKiB(pid)
            maxRSS = max(maxRSS, rss)
        }
        let cpuEnd = ProcessStatistics.cpuTicks(pid)
        guard cpuEnd >= cpuStart, cpuStart > 0 else {
            throw ValidationError(
                "motion-agent (pid \(pid)) was gone before the end of the measurement; its log:\n\(process.log)"
            )
        }
        let wall = Double(bench_monotonic_ns() - wallStart) / 1e9
        let messages = subscriber.count - messagesStart
        let totalCPU = Double(cpuEnd) / ProcessStatistics.ticksPerSecond
        let lifetime = Double(bench_monotonic_ns() - spawned) / 1e9
        let cpu = ProcessStatistics.cpuPercent(from: cpuStart, to: cpuEnd, over: wall)
        let hwm = ProcessStatistics.statusField(pid, "VmHWM:")
        let anonymous = ProcessStatistics.statusField(pid, "RssAnon:")
        let fileBacked = ProcessStatistics.statusField(pid, "RssFile:")
        await process.stop()
        let log = process.log
        let plan = AgentLog.devicePlans(log)
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

    /// The inputs an `--input` value names: `both` is replay and simulated, `all` adds iio.
    static func inputs(_ input: String) -> [String] {
        switch input {
        case "both": ["replay", "simulated"]
        case "all": ["replay", "iio", "simulated"]
        default: [input]
        }
    }

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
}
