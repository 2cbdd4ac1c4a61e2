import Foundation
import TestSupport
import Testing

/// The state directory's real file system fills up under a 200 Hz QoS 1 durable stream while the broker is away:
/// what needs the real parts — the agent keeps running with bounded memory, health.json (a real file, replaced by
/// rename) says so and clears when space returns, and the state files written meanwhile are whole, with no
/// temporary file left. The counting (every message delivered or counted dropped, exactly), the log said once, the
/// Prometheus text and the status run on virtual time in AgentSimulationTests/DiskFullSimulationTests (issue 40).
/// Figures are printed with the prefix `faults:` (BENCHMARKS.md, "Faults").
@Suite(.timeLimit(.minutes(10)), .serialized) struct DiskFullEndToEndTests {
    typealias Reliability = ReliabilityEndToEndTests

    @Test func aFullStateDirectoryKeepsTheStateFilesWholeAndResumes() async throws {
        // Listening once fixes the broker's port; stopped, the agent's durable log only fills.
        let broker = try await MosquittoBroker.started()
        await broker.stop()
        let device = "chaos-full"

        // 2 MiB of tmpfs, 1.5 MiB of it ballast: after the agent's own files and the 256 KiB the log leaves free,
        // the log fills the rest within seconds. max_bytes (4 MiB) is far above the file system: the disk is the
        // bound that bites.
        let agent = try StateDirectoryAgent(
            config: Reliability.config(device: device, port: broker.port, maxBytes: 4 << 20),
            tmpfsKiB: 2048,
            ballastKiB: 1536
        )
        #expect(await agent.runner.waitForOutput(containing: "connecting to mqtt", timeout: 15))
        let rssBefore = agent.residentBytes ?? 0

        // Full: the log says so, health.json says so, the agent runs on.
        #expect(
            await agent.runner.waitForOutput(containing: "is full", timeout: 30),
            "agent log: \(agent.runner.standardError.suffix(3000))"
        )
        let fullAt = ContinuousClock.now
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

        // Space returns: logging resumes by itself and health.json clears.
        #expect(await agent.inside("rm '\(agent.stateDirectory)/ballast'") != nil)
        let freedAt = ContinuousClock.now
        #expect(await agent.runner.waitForOutput(containing: "has room again", timeout: 15))
        let resumed = ContinuousClock.now - freedAt
        var cleared = false
        for _ in 0..<50 where !cleared {
            if let h = await agent.health(), h["storageProblem"] == nil { cleared = true }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(cleared, "health.json still reports the full file system")
        // The state files written meanwhile are whole (replaced by rename, never torn).
        let files = await agent.inside("cd '\(agent.stateDirectory)' && ls") ?? ""
        #expect(files.contains("health.json"), "\(files)")
        for name in ["health.json", "device-motion.json"] where files.contains(name) {
            let text = await agent.inside("cat '\(agent.stateDirectory)/\(name)'") ?? ""
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "\(name) is not whole: \(text)")
        }
        #expect(!files.contains(".tmp-"), "a temporary file was left behind: \(files)")
        let rssAfter = agent.residentBytes ?? 0
        agent.runner.terminate()
        #expect(
            await agent.runner.waitForExit(timeout: 15) == 0,
            "agent log: \(agent.runner.standardError.suffix(3000))"
        )
        print(
            "faults: disk full (2 MiB tmpfs, 1.5 MiB ballast, broker down, 200 Hz QoS 1 durable): logging resumed \(resumed) after space returned, full for \(freedAt - fullAt), state files whole; RSS before \(rssBefore / 1024) KiB, while full \(rssFull / 1024) KiB, after \(rssAfter / 1024) KiB"
        )
    }
}
