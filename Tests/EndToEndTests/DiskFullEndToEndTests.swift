import Foundation
import TestSupport
import Testing

/// The state directory's file system fills up under a 200 Hz QoS 1 durable stream while the broker is away:
/// the agent keeps running with bounded memory, says so in its log, health.json, the Prometheus file and the
/// status, keeps its other state files whole, resumes durable logging when space returns, and every message is
/// either delivered or counted dropped — exactly. Figures are printed with the prefix `faults:` (BENCHMARKS.md,
/// "Faults").
@Suite(.timeLimit(.minutes(10)), .serialized) struct DiskFullEndToEndTests {
    typealias Reliability = ReliabilityEndToEndTests

    @Test func aFullStateDirectoryDropsCountsAndResumes() async throws {
        let broker = try await MosquittoBroker.started(options: .init(persistence: true))
        let device = "chaos-full"
        let subscriber = try await Reliability.PersistentSubscriber(broker, device: device)
        await broker.stop()

        // 2 MiB of tmpfs, 1.5 MiB of it ballast: after the agent's own files and the 256 KiB the log leaves free,
        // the log fills the rest within seconds. max_bytes (4 MiB) is far above the file system: the disk is the
        // bound that bites.
        let prometheus = NSTemporaryDirectory() + "motion-agent-chaos-\(UUID().uuidString.prefix(8)).prom"
        let agent = try StateDirectoryAgent(
            config: Reliability.config(
                device: device,
                port: broker.port,
                maxBytes: 4 << 20,
                extra: """
                    metrics:
                      interval_s: 1
                      prometheus_file: \(prometheus)
                    """
            ),
            tmpfsKiB: 2048,
            ballastKiB: 1536
        )
        #expect(await agent.runner.waitForOutput(containing: "connecting to mqtt", timeout: 15))
        let rssBefore = agent.residentBytes ?? 0

        // Full: the log says so once, health.json and the Prometheus file say so, the agent runs on.
        #expect(
            await agent.runner.waitForOutput(containing: "is full", timeout: 30),
            "agent log: \(agent.runner.standardError.suffix(3000))"
        )
        let fullAt = ContinuousClock.now
        #expect(
            await Reliability.wait(timeout: 10) { Self.gauge(prometheus, "motion_agent_durable_storage_problem") == 1 }
        )
        var health: [String: Any]?
        for _ in 0..<50 where health?["storageProblem"] == nil {
            health = await agent.health()
            try await Task.sleep(for: .milliseconds(200))
        }
        let problem = try #require(health?["storageProblem"] as? String, "health.json: \(String(describing: health))")
        #expect(problem.contains("full") && problem.contains("free space"))
        try await Task.sleep(for: .seconds(3))
        #expect(agent.runner.isRunning)
        let rssFull = agent.residentBytes ?? 0
        let droppedWhileFull = Self.gauge(prometheus, "motion_agent_durable_dropped_no_space_total") ?? 0
        #expect(droppedWhileFull > 0)

        // Full until space returns: the problem did not clear by itself.
        #expect(!agent.runner.standardError.contains("has room again"), "\(agent.runner.standardError.suffix(3000))")
        // Space returns: logging resumes by itself and every report clears.
        #expect(await agent.inside("rm '\(agent.stateDirectory)/ballast'") != nil)
        let freedAt = ContinuousClock.now
        #expect(await agent.runner.waitForOutput(containing: "has room again", timeout: 15))
        let resumed = ContinuousClock.now - freedAt
        #expect(
            await Reliability.wait(timeout: 10) { Self.gauge(prometheus, "motion_agent_durable_storage_problem") == 0 }
        )
        var cleared = false
        for _ in 0..<50 where !cleared {
            if let h = await agent.health(), h["storageProblem"] == nil { cleared = true }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(cleared, "health.json still reports the full file system")
        // The state files written meanwhile are whole (replaced by rename, never torn).
        let files = await agent.inside("cd '\(agent.stateDirectory)' && ls") ?? ""
        for name in ["health.json", "device-motion.json"] where files.contains(name) {
            let text = await agent.inside("cat '\(agent.stateDirectory)/\(name)'") ?? ""
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "\(name) is not whole: \(text)")
        }
        #expect(!files.contains(".tmp-"), "a temporary file was left behind: \(files)")
        try await Task.sleep(for: .seconds(2))

        // The broker returns: what was kept arrives, and kept + dropped is everything the stream produced.
        try await broker.start()
        try await subscriber.reconnect()
        #expect(await Reliability.wait(timeout: 60) { Reliability.caughtUp(subscriber, device) })
        let rssAfter = agent.residentBytes ?? 0
        agent.runner.terminate()
        #expect(
            await agent.runner.waitForExit(timeout: 15) == 0,
            "agent log: \(agent.runner.standardError.suffix(3000))"
        )
        #expect(await Reliability.wait(timeout: 5) { subscriber.goodbye(device) != nil })
        let goodbye = try #require(subscriber.goodbye(device))
        let outbox = try #require(goodbye["outbox"] as? [String: Any])

        let seqs = subscriber.seqs(device)
        let unique = Set(seqs)
        let produced = try #require(unique.max())
        let dropped = try #require(outbox["durableDropped"] as? Int)
        let droppedNoSpace = try #require(outbox["durableDroppedNoSpace"] as? Int)
        let appended = try #require(outbox["durableAppended"] as? Int)
        let missing = (1...produced).filter { !unique.contains($0) }.count
        print(
            "faults: disk full (2 MiB tmpfs, 1.5 MiB ballast, broker down, 200 Hz QoS 1 durable): produced \(produced), written \(appended), received \(seqs.count), unique \(unique.count), dropped \(dropped) (no space \(droppedNoSpace)), missing \(missing), duplicated \(seqs.count - unique.count), logging resumed \(resumed) after space returned, full for \(freedAt - fullAt); RSS before \(rssBefore / 1024) KiB, while full \(rssFull / 1024) KiB, after \(rssAfter / 1024) KiB"
        )
        #expect(droppedNoSpace > 0)
        #expect(missing == dropped, "every message not received is counted dropped, and nothing else")
        #expect(unique.count + dropped == produced)
        #expect(outbox["durableDepth"] as? Int == 0)
        #expect(outbox["durableStorageProblem"] == nil)
        #expect(seqs.count - unique.count <= 100, "duplicates beyond one in-flight window")
        await subscriber.subscriber.close()
        await broker.stop()
        try? FileManager.default.removeItem(atPath: prometheus)
    }

    /// One sample's value of a family in the Prometheus text file (nil while the file or the family is absent).
    static func gauge(_ path: String, _ name: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let families = try? PrometheusTextParser.parse(text),
            let sample = families.first(where: { $0.name == name })?.samples.first
        else { return nil }
        return sample.value
    }
}
