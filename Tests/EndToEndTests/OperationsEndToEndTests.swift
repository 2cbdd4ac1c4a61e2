import AgentPorts
import Foundation
import TestSupport
import Testing

/// The operator's side with the real binary and a real mosquitto: the process's own figures in the health report
/// and the Prometheus textfile on a real file system, and `motion-agent watch` in a terminal. The report's logic and
/// Home Assistant discovery and its removal run on virtual time in AgentSimulationTests/OperationsSimulationTests
/// (issue 40).
@Suite(.timeLimit(.minutes(5)), .serialized) struct OperationsEndToEndTests {
    /// What only the real process has: its own memory and CPU in the report, and the textfile on a real file
    /// system. The report's counters, the textfile's agreement with them and a broker restart counted as one
    /// reconnect run on virtual time in AgentSimulationTests/OperationsSimulationTests (issue 40).
    @Test func metricsCarryTheProcesssMemoryAndCPUAndThePrometheusFileParses() async throws {
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-metrics/metrics"])
        let agent = try AgentProcess(
            config: AgentProcess.config(
                device: "e2e-metrics",
                port: broker.port,
                extra: "metrics:\n  interval_s: 1\n  prometheus_file: metrics.prom"
            )
        )
        defer { agent.runner.kill() }
        let reports = try await subscriber.waitFor(count: 2, timeout: 20)
        let second = payloadJSON(reports[1])
        #expect(second["device"] as? String == "e2e-metrics")
        let process = try #require(second["process"] as? [String: Any])
        #expect((process["rssBytes"] as? Int ?? 0) > 1 << 20)
        #expect((process["cpuSeconds"] as? Double ?? 0) > 0)
        let cpu = try #require(process["cpuPercent"] as? Double)
        #expect(cpu >= 0 && cpu <= 400, "at most all cores of a small board")

        // The textfile, parsed strictly.
        let path = agent.directory + "/metrics.prom"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let families = try PrometheusTextParser.parse(text)
        let read = families.first { $0.name == "motion_agent_samples_read_total" }?.samples.first
        #expect(read?.labels == ["device": "e2e-metrics"])
        #expect((read?.value ?? 0) > 0)
        let resident = families.first { $0.name == "motion_agent_resident_memory_bytes" }
        #expect(resident?.type == "gauge")
        #expect((resident?.samples.first?.value ?? 0) > Double(1 << 20), "the process's own RSS")
        agent.runner.terminate()
        #expect(await agent.runner.waitForExit(timeout: 15) == 0)
        await subscriber.close()
        await broker.stop()
    }

    @Test func watchShowsLiveValuesInATerminal() async throws {
        let broker = try await MosquittoBroker.started()
        let device = "e2e-watch"
        let agent = try AgentProcess(
            config: AgentProcess.config(
                device: device,
                port: broker.port,
                scenario: "walking",
                extra: "metrics:\n  interval_s: 1"
            )
        )
        defer { agent.runner.kill() }
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/\(device)/accelerometer"])
        try await subscriber.waitFor(count: 5, timeout: 20)
        await subscriber.close()

        // --once: one plain frame after the given seconds of data.
        let once = ProcessRunner(
            executable: AgentProcess.executable,
            arguments: ["watch", "--port", String(broker.port), "--once", "--seconds", "2", device]
        )
        try once.start()
        #expect(await once.waitForExit(timeout: 20) == 0, "stderr: \(once.standardError)")
        let frame = once.standardOutput
        for text in ["motion/\(device)", "online", "accelerometer", "device-motion", "pedometer", "|accel|", "roll"] {
            #expect(frame.contains(text), "\(text) missing from:\n\(frame)")
        }
        #expect(!frame.contains("\u{1B}["), "--once prints no escapes")
        let accelerometer = try #require(frame.split(separator: "\n").first { $0.hasPrefix("accelerometer ") })
        let rate = try #require(Double(accelerometer.split(separator: " ")[1]))
        #expect(rate > 10 && rate < 100, "the configured 50 Hz, measured: \(accelerometer)")

        // Live, in a tmux pane: the screen fills and changes, and q quits.
        let socket = "motion-e2e-\(UUID().uuidString.prefix(8))"
        func tmux(_ arguments: [String]) async throws -> (Int32?, String) {
            let runner = ProcessRunner(executable: "/usr/bin/tmux", arguments: ["-L", socket] + arguments)
            do { try runner.start() } catch { throw TmuxMissing() }
            let code = await runner.waitForExit(timeout: 10)
            return (code, runner.standardOutput)
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else { throw TmuxMissing() }
        let command = "\(AgentProcess.executable) watch --port \(broker.port) \(device)"
        let (started, _) = try await tmux(["new-session", "-d", "-s", "watch", "-x", "160", "-y", "40", command])
        #expect(started == 0)
        defer {
            // Synchronous, so a failing test leaves no tmux server (and no watch process) behind.
            let kill = Process()
            kill.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
            kill.arguments = ["-L", socket, "kill-server"]
            kill.standardError = FileHandle.nullDevice
            if (try? kill.run()) != nil { kill.waitUntilExit() }
            unlink("/tmp/tmux-\(getuid())/\(socket)")
        }
        var screen = ""
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(200))
            screen = try await tmux(["capture-pane", "-p", "-t", "watch"]).1
            // "(q quits)" is the frame's last line: a capture taken mid-redraw (seen on a loaded host) lacks it.
            if screen.contains("device-motion") && screen.contains("metrics: cpu") && screen.contains("▁")
                && screen.contains("(q quits)")
            {
                break
            }
        }
        for text in [
            "motion/\(device)", "online", "accelerometer", "gyroscope", "device-motion", "pedometer", "metrics: cpu",
            "(q quits)",
        ] {
            #expect(screen.contains(text), "\(text) missing from the pane:\n\(screen)")
        }
        #expect(screen.unicodeScalars.contains { (0x2581...0x2588).contains($0.value) }, "sparklines drawn")
        try await Task.sleep(for: .milliseconds(600))
        let later = try await tmux(["capture-pane", "-p", "-t", "watch"]).1
        #expect(later != screen, "the values are live")
        _ = try await tmux(["send-keys", "-t", "watch", "q"])
        var closed = false
        for _ in 0..<50 where !closed {
            try await Task.sleep(for: .milliseconds(100))
            closed = try await tmux(["has-session", "-t", "watch"]).0 != 0
        }
        #expect(closed, "q quits the view")
    }
}

struct TmuxMissing: Error, CustomStringConvertible {
    var description: String { "tmux is missing: apt-get install -y tmux (scripts/lib/common.sh lists it)" }
}
