import AgentPorts
import Foundation
import TestSupport
import Testing

/// The operator's side with the real binary and a real mosquitto: the health report on `{root}/metrics` and as
/// a Prometheus textfile, Home Assistant discovery and its removal, and `motion-agent watch` in a terminal.
@Suite(.timeLimit(.minutes(5)), .serialized) struct OperationsEndToEndTests {
    @Test func metricsArriveWithSaneValuesAndThePrometheusFileParses() async throws {
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
        #expect(reports.allSatisfy { !$0.retain })
        let first = payloadJSON(reports[0])
        let second = payloadJSON(reports[1])
        #expect(second["device"] as? String == "e2e-metrics")
        #expect(second["intervalSeconds"] as? Int == 1)
        #expect((second["bootCount"] as? Int ?? 0) >= 1)
        let samples = try #require(second["samples"] as? [String: Any])
        let earlierSamples = try #require(first["samples"] as? [String: Any])
        #expect((samples["read"] as? Int ?? 0) > (earlierSamples["read"] as? Int ?? 0), "samples keep coming")
        #expect(samples["invalid"] as? Int == 0)
        let messages = try #require(second["messages"] as? [String: Any])
        #expect((messages["published"] as? Int ?? 0) > 0)
        #expect(messages["failed"] as? Int == 0 && messages["droppedOverflow"] as? Int == 0)
        let outbox = try #require(second["outbox"] as? [String: Any])
        #expect((outbox["depth"] as? Int ?? -1) >= 0 && (outbox["bytes"] as? Int ?? -1) >= 0)
        let connection = try #require(second["connection"] as? [String: Any])
        #expect(connection["connected"] as? Bool == true)
        #expect(connection["reconnects"] as? Int == 0 && connection["failures"] as? Int == 0)
        let process = try #require(second["process"] as? [String: Any])
        #expect((process["rssBytes"] as? Int ?? 0) > 1 << 20)
        #expect((process["cpuSeconds"] as? Double ?? 0) > 0)
        let cpu = try #require(process["cpuPercent"] as? Double)
        #expect(cpu >= 0 && cpu <= 400, "at most all cores of a small board")
        let uptime = try #require(second["uptimeSeconds"] as? Double)
        #expect(uptime >= 1 && uptime < 60)

        // The textfile, parsed strictly.
        let path = agent.directory + "/metrics.prom"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let families = try PrometheusTextParser.parse(text)
        let read = families.first { $0.name == "motion_agent_samples_read_total" }?.samples.first
        #expect(read?.labels == ["device": "e2e-metrics"])
        #expect((read?.value ?? 0) > 0)
        #expect(families.first { $0.name == "motion_agent_resident_memory_bytes" }?.type == "gauge")

        // A broker restart is one reconnect.
        await subscriber.close()
        try await broker.restart()
        let after = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-metrics/metrics"])
        try await after.waitUntil(timeout: 20, "a report counting the reconnect") { messages in
            messages.contains { ((payloadJSON($0)["connection"] as? [String: Any])?["reconnects"] as? Int ?? 0) >= 1 }
        }
        await after.close()
    }

    @Test func homeAssistantDiscoveryAppearsAndIsRemovedWhenSwitchedOff() async throws {
        let broker = try await MosquittoBroker.started()
        let device = "e2e-ha"
        let enabledConfig = AgentProcess.config(
            device: device,
            port: broker.port,
            extra: "home_assistant:\n  enabled: true"
        )
        let agent = try AgentProcess(config: enabledConfig)
        let status = try await CapturingSubscriber(broker: broker, filters: ["motion/\(device)/status"])
        try await status.waitUntil(timeout: 20, "the birth") {
            $0.contains { payloadJSON($0)["state"] as? String == "online" }
        }
        await status.close()

        // The configs follow the birth; wait until all are out (a loaded host sends some of them after a subscriber
        // that came right after the birth subscribed, as live messages), then a subscriber arriving later gets them
        // because they are retained.
        let published = try await CapturingSubscriber(broker: broker, filters: ["homeassistant/#"])
        try await published.waitFor(count: 13, timeout: 20)
        await published.close()
        let discovery = try await CapturingSubscriber(broker: broker, filters: ["homeassistant/#"])
        try await discovery.waitFor(count: 13, timeout: 10)
        let configs = discovery.messages
        #expect(configs.allSatisfy { $0.retain && $0.topic.hasSuffix("/config") && $0.topic.contains("/\(device)/") })
        let objects = configs.map(payloadJSON)
        #expect(Set(objects.compactMap { $0["unique_id"] as? String }).count == configs.count)
        #expect(objects.allSatisfy { ($0["state_topic"] as? String)?.hasPrefix("motion/\(device)/") == true })
        #expect(configs.contains { $0.topic == "homeassistant/binary_sensor/\(device)/online/config" })
        #expect(configs.contains { $0.topic == "homeassistant/sensor/\(device)/steps/config" })
        await discovery.close()

        // Restarted with the feature off, it removes them.
        agent.runner.terminate()
        #expect(await agent.runner.waitForExit(timeout: 15) == 0)
        let watcher = try await CapturingSubscriber(broker: broker, filters: ["homeassistant/#"])
        try await watcher.waitFor(count: configs.count, timeout: 5)
        let disabledConfig = enabledConfig.replacingOccurrences(of: "enabled: true", with: "enabled: false")
        try disabledConfig.write(toFile: agent.configPath, atomically: true, encoding: .utf8)
        let again = try AgentProcess(config: disabledConfig, arguments: ["run", "--config", agent.configPath])
        defer { again.runner.kill() }
        try await watcher.waitFor(count: configs.count * 2, timeout: 20)
        let removals = Array(watcher.messages.dropFirst(configs.count))
        #expect(removals.allSatisfy { $0.payload.isEmpty })
        #expect(Set(removals.map(\.topic)) == Set(configs.map(\.topic)))
        await watcher.close()
        let late = try await CapturingSubscriber(broker: broker, filters: ["homeassistant/#"])
        try await Task.sleep(for: .milliseconds(500))
        #expect(late.messages.isEmpty, "no discovery config is retained any more")
        await late.close()
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
