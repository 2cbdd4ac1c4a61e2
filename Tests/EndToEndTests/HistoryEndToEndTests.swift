import Foundation
import TestSupport
import Testing

/// Core Motion's historical queries as control commands, answered from the on-device history, across a restart
/// and over a corrupt database.
@Suite(.timeLimit(.minutes(10)), .serialized) struct HistoryEndToEndTests {
    static func query(
        _ broker: MosquittoBroker,
        _ device: String,
        _ command: String,
        from: Double,
        to: Double
    ) async throws
        -> [String: Any]
    {
        let (code, lines) = try await ControlEndToEndTests.ctl(
            broker,
            ["--device", device, command, "from=\(Int(from))", "to=\(Int(to.rounded(.up)))"]
        )
        #expect(code == 0, "\(lines)")
        let fields = lines.first?.split(separator: "\t", omittingEmptySubsequences: false) ?? []
        guard fields.count >= 5, let data = fields[4].data(using: .utf8) else { return [:] }
        if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] { return object }
        if let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] { return ["segments": list] }
        return [:]
    }

    @Test func stepsAndActivitiesSurviveARestartAndACorruptDatabaseIsReplaced() async throws {
        let broker = try await MosquittoBroker.started()
        let start = Date().timeIntervalSince1970 - 1
        let first = try AgentProcess(
            config: AgentProcess.config(device: "e2e-history", port: broker.port, scenario: "walking")
        )
        let pedometer = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-history/pedometer"])
        // Walk until some steps are counted and a snapshot has been stored (every 10 s, and at pause/resume).
        try await pedometer.waitUntil(timeout: 40, "20 steps") { messages in
            messages.contains { (payloadJSON($0)["numberOfSteps"] as? Int ?? 0) >= 20 }
        }
        try await Task.sleep(for: .seconds(2))
        first.runner.terminate()  // shutdown stores a last snapshot
        #expect(await first.runner.waitForExit(timeout: 15) == 0)
        let stopped = Date().timeIntervalSince1970
        let lastLive = pedometer.messages.compactMap { payloadJSON($0)["numberOfSteps"] as? Int }.max() ?? 0

        // A new run: the first run's steps are still in the history.
        let second = try AgentProcess(
            config: try String(contentsOfFile: first.configPath, encoding: .utf8),
            arguments: ["run", "--config", first.configPath]
        )
        try await pedometer.waitFor(count: pedometer.messages.count + 1, timeout: 20)
        let stored = try await Self.query(broker, "e2e-history", "query-pedometer", from: start, to: stopped)
        let steps = stored["numberOfSteps"] as? Int ?? -1
        #expect(steps >= lastLive - 2 && steps > 0, "history has \(steps) steps, the live stream last said \(lastLive)")
        let activities = try await Self.query(
            broker,
            "e2e-history",
            "query-activity",
            from: start,
            to: Date().timeIntervalSince1970
        )
        let segments = activities["segments"] as? [[String: Any]] ?? []
        #expect(segments.contains { $0["walking"] as? Bool == true }, "\(segments)")
        second.runner.terminate()
        // The store checkpoints into the file as it closes: corrupt it only once that process is gone.
        #expect(await second.runner.waitForExit(timeout: 30) == 0, "\(second.runner.standardError.suffix(2000))")

        // A corrupt database is moved aside and replaced; the agent keeps running and answers.
        let database = first.directory + "/state/history.sqlite"
        // The agent's last transactions may still sit in the write-ahead log (SQLite replays it at open, page 1
        // included), so a corrupt database means the main file garbled and no log to rescue it.
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: database))
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        let published = pedometer.messages.count
        let third = try AgentProcess(
            config: try String(contentsOfFile: first.configPath, encoding: .utf8),
            arguments: ["run", "--config", first.configPath]
        )
        defer { third.runner.kill() }
        #expect(
            await third.runner.waitForOutput(containing: "corrupt", timeout: 15),
            "the log says the database was corrupt: \(third.runner.standardError)"
        )
        // The store is opened before the agent connects: query only once it publishes, as after the restart
        // above — else ctl's 4 s can run out before the agent is on the broker (seen on a loaded CI host).
        try await pedometer.waitFor(count: published + 1, timeout: 20)
        let after = try await Self.query(
            broker,
            "e2e-history",
            "query-pedometer",
            from: start,
            to: Date().timeIntervalSince1970
        )
        #expect(after["numberOfSteps"] is Int)
        let moved = try FileManager.default.contentsOfDirectory(atPath: first.directory + "/state").filter {
            $0.contains("corrupt")
        }
        #expect(!moved.isEmpty, "the corrupt file was kept aside for inspection")
        await pedometer.close()
    }
}
