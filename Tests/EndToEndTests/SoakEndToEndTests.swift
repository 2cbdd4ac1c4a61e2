import Foundation
import Platform
import TestSupport
import Testing

/// The short soak that runs in CI (the long one is scripts/checks/soak.py, in BENCHMARKS.md): the real agent at
/// 1 kHz with every stream on for a minute; memory, file descriptors and threads must stay flat after warm-up.
@Suite(.timeLimit(.minutes(10))) struct SoakEndToEndTests {
    struct Sample {
        var rss: Int
        /// Anonymous resident memory: the heap and stacks, without the code pages of the binary and libraries,
        /// which the kernel pages in (and out) as code paths run — a leak shows here.
        var anonymous: Int
        var fds: Int
        var threads: Int
    }

    static func sample(_ pid: Int32) -> Sample? {
        // The fewest of three readings 50 ms apart: a state file being replaced (the estimators' minute save, a
        // health write) holds two descriptors for a moment, and a reading that lands on it is not a leak.
        var counts: [Int] = []
        for attempt in 0..<3 {
            if attempt > 0 { usleep(50_000) }
            guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return nil }
            counts.append(fds.count)
        }
        let fds = counts.min()!
        func field(_ name: String) -> Int { ProcFS.statusValue(pid: pid, name + ":").map { Int($0) } ?? -1 }
        return Sample(
            rss: field("VmRSS") * 1024,
            anonymous: field("RssAnon") * 1024,
            fds: fds,
            threads: field("Threads")
        )
    }

    @Test func resourcesStayFlatAtOneKilohertzWithEveryStreamOn() async throws {
        let broker = try await MosquittoBroker.started()
        let agent = try AgentProcess(
            config: AgentProcess.config(
                device: "e2e-soak",
                port: broker.port,
                scenario: "mixed-day",
                simulatedRateHz: 1000,
                streams: """
                    streams:
                      accelerometer: {rate_hz: 100}
                      gyroscope: {rate_hz: 100}
                      magnetometer: {rate_hz: 50}
                      device-motion: {rate_hz: 100}
                      submersion: {enabled: true}
                    """
            )
        )
        defer { agent.runner.kill() }
        let subscriber = try await CapturingSubscriber(
            broker: broker,
            filters: ["motion/e2e-soak/device-motion"],
            qos: 0
        )
        try await subscriber.waitFor(count: 10, timeout: 20)
        try await Task.sleep(for: .seconds(20))  // warm-up: caches, first batches, the first history snapshot
        var samples: [Sample] = []
        for _ in 0..<9 {
            samples.append(try #require(Self.sample(agent.runner.processIdentifier)))
            try await Task.sleep(for: .seconds(5))
        }
        #expect(agent.runner.isRunning)
        let rss = samples.map(\.rss)
        let anonymous = samples.map(\.anonymous)
        let growth = anonymous.last! - anonymous.first!
        // 40 s of 1 kHz input and ~500 messages/s: a leak of 40 bytes a sample would add 1.5 MB (a debug build grows ~0.5 MB here; release is flat).
        #expect(growth < 1_500_000, "anonymous memory grew \(growth) bytes after warm-up: \(anonymous)")
        #expect(Set(samples.map(\.fds)).count == 1, "open file descriptors changed: \(samples.map(\.fds))")
        #expect(Set(samples.map(\.threads)).count == 1, "threads changed: \(samples.map(\.threads))")
        print(
            "soak (CI): RSS \(rss.map { $0 / 1000 }) kB, anonymous \(anonymous.map { $0 / 1000 }) kB, fds \(samples[0].fds), threads \(samples[0].threads)"
        )
        await subscriber.close()
    }
}
