import AgentControl
import AgentPipeline
import AgentRuntime
import Foundation
import Logging
import MotionWire
import Platform
import TestSupport
import Testing

/// Each test's time limit: 15 minutes for CI's 6 kills (7.6 min of bounded waits), longer for chaos.sh's 100.
private let powerCutTimeLimitMinutes =
    15 + (Int(ProcessInfo.processInfo.environment["MOTION_AGENT_CHAOS_ITERATIONS"] ?? "") ?? 6) / 2

#if canImport(Glibc)
import Glibc
#endif

/// The power-cut loop: the agent SIGKILLed at a random moment — mid durable write, mid replay of a backlog,
/// right after a config reload (SIGHUP), across the history's 10 s snapshots — with the broker up in some
/// iterations and down in others, always on the same state directory. After every restart the durable log
/// and the history database open and the agent runs; at the end every message that was on disk unacknowledged
/// at a kill has been delivered (at least once; duplicates bounded by the in-flight window per kill).
///
/// `MOTION_AGENT_CHAOS_ITERATIONS` sets the number of kills (CI: 6; scripts/checks/chaos.sh: 100), and
/// `MOTION_AGENT_CHAOS_SEED` the random moments. Figures are printed with the prefix `faults:`.
@Suite(.timeLimit(.minutes(powerCutTimeLimitMinutes)), .serialized)
struct PowerCutEndToEndTests {
    typealias Reliability = ReliabilityEndToEndTests

    static var iterations: Int {
        Int(ProcessInfo.processInfo.environment["MOTION_AGENT_CHAOS_ITERATIONS"] ?? "") ?? 6
    }

    static var seed: UInt64 {
        UInt64(ProcessInfo.processInfo.environment["MOTION_AGENT_CHAOS_SEED"] ?? "") ?? 20
    }

    /// The durable accelerometer plus the pedometer and activity streams, whose history is written to SQLite.
    static func config(device: String, port: Int) -> String {
        Reliability.config(device: device, port: port)
            .replacingOccurrences(
                of: "pedometer: {enabled: false}",
                with: "pedometer: {enabled: true, qos: 0}"
            )
            .replacingOccurrences(of: "activity: {enabled: false}", with: "activity: {enabled: true, qos: 0}")
    }

    /// The payloads on disk and not yet acknowledged, read as the next start reads them (torn tails cut).
    static func unacknowledged(_ directory: String) throws -> [String] {
        var logger = Logger(label: "chaos")
        logger.logLevel = .critical
        let log = try DurableLog(
            storage: try SegmentFiles(folder: directory),
            maxBytes: 8_388_608,
            maxAgeSeconds: 86_400,
            logger: logger
        )
        defer { log.close() }
        var payloads: [String] = []
        // next() hands out the records past the cursor without changing the cursor (nothing is acknowledged).
        while let record = log.next(nowMillis: UInt64(Date().timeIntervalSince1970 * 1000)) {
            payloads.append(String(decoding: record.payload, as: UTF8.self))
            log.markPublished(record.seq)
        }
        return payloads
    }

    @Test func theAgentSurvivesPowerCutsAndDeliversWhatReachedTheDisk() async throws {
        var rng = ChaosRandom(seed: Self.seed)
        let broker = try await MosquittoBroker.started(options: .init(persistence: true))
        let device = "chaos-power"
        let subscriber = try await Reliability.PersistentSubscriber(broker, device: device)
        let config = Self.config(device: device, port: broker.port)
        var directory: String?
        var onDisk = Set<String>()
        var brokerUp = true
        var killsWithBrokerUp = 0
        var moments: [String: Int] = [:]
        var restarts: [Double] = []
        // The largest resident size any run reached just before its kill, and the last run's after it drained
        // everything the kills left: the Faults table's memory column.
        var peakResident = 0
        let started = ContinuousClock.now

        for iteration in 0..<Self.iterations {
            // Broker up in some iterations, down in others (every kind of transition happens).
            let wantUp = Bool.random(using: &rng)
            if wantUp && !brokerUp {
                try await broker.start()
                try await subscriber.reconnect()
            } else if !wantUp && brokerUp {
                await broker.stop()
            }
            brokerUp = wantUp

            let launched = ContinuousClock.now
            let agent = try AgentProcess(config: config, directory: directory)
            directory = agent.directory
            let running = await agent.runner.waitForOutput(containing: "connecting to mqtt", timeout: 15)
            #expect(
                running,
                "iteration \(iteration): the agent did not start; log: \(agent.runner.standardError.suffix(3000))"
            )
            restarts.append(Reliability.seconds(ContinuousClock.now - launched))

            // The moment: mid-stream, right after a reload, or (broker up after an outage) mid-replay.
            let moment: String
            switch Int.random(in: 0..<4, using: &rng) {
            case 0:
                moment = "reload"
                try await Task.sleep(for: .milliseconds(Int.random(in: 200...1500, using: &rng)))
                agent.runner.signal(SIGHUP)
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...60, using: &rng)))
            case 1:
                moment = brokerUp ? "replay" : "write"
                try await Task.sleep(for: .milliseconds(Int.random(in: 50...600, using: &rng)))
            case 2:
                // Across a history snapshot (every 10 s of a run).
                moment = "history"
                try await Task.sleep(for: .milliseconds(Int.random(in: 9_800...10_300, using: &rng)))
            default:
                moment = "write"
                try await Task.sleep(for: .milliseconds(Int.random(in: 300...3000, using: &rng)))
            }
            moments[moment, default: 0] += 1
            peakResident = max(peakResident, agent.runner.residentBytes ?? 0)
            agent.runner.kill()
            _ = await agent.runner.waitForExit(timeout: 5)
            if brokerUp { killsWithBrokerUp += 1 }
            let log = agent.runner.standardError
            #expect(
                !log.contains("durable streams are kept in memory only"),
                "iteration \(iteration): the log did not open: \(log.suffix(3000))"
            )
            #expect(
                !log.contains("no step and activity history"),
                "iteration \(iteration): the history did not open: \(log.suffix(3000))"
            )
            let left = try Self.unacknowledged(agent.directory + "/state/outbox")
            onDisk.formUnion(left)
        }

        // The last start, with the broker up, drains everything that is left.
        if !brokerUp {
            try await broker.start()
            try await subscriber.reconnect()
        }
        let last = try AgentProcess(config: config, directory: directory)
        #expect(await last.runner.waitForOutput(containing: "connecting to mqtt", timeout: 15))
        #expect(await Reliability.wait(timeout: 120) { Self.received(subscriber, device).isSuperset(of: onDisk) })
        // What this last run logged while it drained the old backlog is still in the log when the old messages
        // have arrived (after 100 kills, 3216 of them were): the goodbye's depth is 0 once it has caught up
        // with the live stream.
        #expect(await Reliability.wait(timeout: 300) { Reliability.caughtUp(subscriber, device) })
        let drainedResident = last.runner.residentBytes ?? 0
        let outbox = try await Reliability.stop(last, subscriber, device: device)
        let log = last.runner.standardError
        #expect(
            !log.contains("durable streams are kept in memory only") && !log.contains("no step and activity history")
        )

        let all = subscriber.subscriber.messages(on: "motion/\(device)/accelerometer").map {
            String(decoding: $0.payload, as: UTF8.self)
        }
        let received = Set(all)
        let lost = onDisk.subtracting(received).count
        let duplicates = all.count - received.count
        let elapsed = ContinuousClock.now - started
        let slowest = restarts.max() ?? 0
        print(
            "faults: power cut ×\(Self.iterations) (SIGKILL; seed \(Self.seed); moments \(moments.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); broker up at \(killsWithBrokerUp) kills): unacknowledged on disk at the kills \(onDisk.count), received \(all.count), unique \(received.count), lost \(lost), duplicated \(duplicates), slowest restart to connecting \(String(format: "%.2f", slowest)) s, loop \(elapsed); RSS at the kills up to \(peakResident / 1024) KiB, after the last run drained \(drainedResident / 1024) KiB"
        )
        #expect(lost == 0, "messages on disk at a kill never arrived")
        #expect(outbox["durableDepth"] as? Int == 0)
        // QoS 1 duplicates come from messages in flight (at most max_inflight, 100 by default) at a kill or
        // a reconnect.
        #expect(duplicates <= 100 * (killsWithBrokerUp + 1))
        await subscriber.subscriber.close()
        await broker.stop()
    }

    static func received(_ subscriber: Reliability.PersistentSubscriber, _ device: String) -> Set<String> {
        Set(
            subscriber.subscriber.messages(on: "motion/\(device)/accelerometer").map {
                String(decoding: $0.payload, as: UTF8.self)
            }
        )
    }
}

/// SplitMix64, seeded: every run of the loop makes the same choices for the same seed.
struct ChaosRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
