import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import Foundation
import MotionWire
import TestSupport
import Testing

/// Birth, will, clean shutdown and a config error — with the real binary. (A broker that is down at start is the
/// connection's logic: AgentSimulationTests/ConnectionSimulationTests, issue 40.)
@Suite(.timeLimit(.minutes(5)), .serialized) struct LifecycleEndToEndTests {
    static func statuses(_ s: CapturingSubscriber, _ device: String) -> [[String: Any]] {
        s.messages(on: "motion/\(device)/status").map(payloadJSON)
    }

    @Test func birthIsRetainedAndTheWillAnnouncesAKilledAgent() async throws {
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-will/status"])
        let agent = try AgentProcess(config: AgentProcess.config(device: "e2e-will", port: broker.port))
        try await subscriber.waitUntil(timeout: 20, "the birth") {
            $0.contains { payloadJSON($0)["state"] as? String == "online" }
        }
        let birth = try #require(Self.statuses(subscriber, "e2e-will").first { $0["state"] as? String == "online" })
        #expect(birth["agentVersion"] as? String == AgentVersion.version)
        #expect(birth["schemaVersion"] as? Int == AgentVersion.schemaVersion)
        let boot = try #require(birth["bootCount"] as? Int)
        let sensors = try #require(birth["sensors"] as? [String: Any])
        #expect(sensors["isAccelerometerAvailable"] as? Bool == true && sensors["isGyroAvailable"] as? Bool == true)
        #expect(
            sensors["isDeviceMotionAvailable"] as? Bool == true && sensors["isStepCountingAvailable"] as? Bool == true
        )
        #expect(
            sensors["availableAttitudeReferenceFrames"] as? [String]
                == ["xArbitraryZVertical", "xArbitraryCorrectedZVertical", "xMagneticNorthZVertical"],
            "no location configured: no true north"
        )
        #expect((birth["streams"] as? [String: Any])?.keys.sorted() == StreamName.allCases.map(\.rawValue).sorted())

        // A late subscriber gets the birth because it is retained.
        let late = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-will/status"])
        try await late.waitFor(count: 1, timeout: 5)
        #expect(late.messages.first?.retain == true)
        #expect(payloadJSON(late.messages[0])["state"] as? String == "online")
        await late.close()

        agent.runner.kill()  // SIGKILL: no goodbye, the broker must publish the will
        try await subscriber.waitUntil(timeout: 15, "the will") {
            $0.contains { payloadJSON($0)["state"] as? String == "offline" }
        }
        let will = try #require(Self.statuses(subscriber, "e2e-will").last)
        #expect(will["reason"] as? String == "connection lost")
        #expect(will["bootCount"] as? Int == boot, "the will carries the boot count of its run")

        // The next run's birth has the next boot count (state directory kept).
        let again = try AgentProcess(
            config: try String(contentsOfFile: agent.configPath, encoding: .utf8),
            arguments: ["run", "--config", agent.configPath]
        )
        defer { again.runner.kill() }
        try await subscriber.waitUntil(timeout: 20, "a second birth") { messages in
            messages.filter { payloadJSON($0)["state"] as? String == "online" }.count >= 2
        }
        let second = try #require(Self.statuses(subscriber, "e2e-will").last { $0["state"] as? String == "online" })
        #expect(second["bootCount"] as? Int == boot + 1)
        await subscriber.close()
    }

    @Test func sigtermSaysGoodbyeAndExitsZero() async throws {
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-term/#"])
        let agent = try AgentProcess(config: AgentProcess.config(device: "e2e-term", port: broker.port))
        try await subscriber.waitFor(count: 20, on: "motion/e2e-term/accelerometer", timeout: 20)
        agent.runner.terminate()
        let code = await agent.runner.waitForExit(timeout: 15)
        #expect(code == 0, "exit status \(String(describing: code)); stderr: \(agent.runner.standardError)")
        try await subscriber.waitUntil(timeout: 5, "the goodbye") { messages in
            messages.contains { payloadJSON($0)["state"] as? String == "offline" }
        }
        let goodbye = try #require(Self.statuses(subscriber, "e2e-term").last)
        #expect(
            goodbye["reason"] as? String == "shutdown",
            """
            a clean stop is not reported as a lost connection; statuses: \(Self.statuses(subscriber, "e2e-term")); \
            stderr: \(agent.runner.standardError); the broker's log: \(broker.log)
            """
        )
        // After the goodbye nothing more arrives from this device.
        let count = subscriber.messages.count
        try await Task.sleep(for: .milliseconds(500))
        #expect(subscriber.messages.count == count)
        await subscriber.close()
    }

    @Test func anInvalidConfigStopsTheAgentWithTheKeyAndLine() async throws {
        let agent = try AgentProcess(
            config: """
                device:
                  id: e2e-bad
                streams:
                  accelerometer:
                    rate_hz: 5000
                """
        )
        let code = await agent.runner.waitForExit(timeout: 15)
        #expect(code == 78, "EX_CONFIG")
        let stderr = agent.runner.standardError
        #expect(stderr.contains("streams.accelerometer.rate_hz"), "\(stderr)")
        #expect(stderr.contains("config.yaml:5"), "the line of the bad value: \(stderr)")
        #expect(stderr.contains("5000"))
    }

    @Test func checkConfigPrintsTheEffectiveConfiguration() async throws {
        let path = NSTemporaryDirectory() + "check-\(UUID().uuidString.prefix(8)).yaml"
        try "device:\n  id: e2e-check\n".write(toFile: path, atomically: true, encoding: .utf8)
        let check = ProcessRunner(executable: AgentProcess.executable, arguments: ["check-config", path])
        try check.start()
        #expect(await check.waitForExit(timeout: 10) == 0)
        #expect(check.standardOutput.contains("id: \"e2e-check\""))
        #expect(check.standardOutput.contains("rate_hz: 50"))
    }

    /// `check-config --explain` reads the desired documents the state directory keeps and names each
    /// setting's source; a kept document that no longer validates is named as the problem it is.
    @Test func checkConfigExplainNamesEachSettingsSource() async throws {
        let directory = NSTemporaryDirectory() + "explain-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory + "/desired", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/config.yaml"
        try "agent:\n  state_dir: \(directory)\ncontrol:\n  groups: [lab]\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        try #"{"version": 3, "streams": {"accelerometer": {"rate_hz": 100}}}"#
            .write(toFile: directory + "/desired/fleet.json", atomically: true, encoding: .utf8)
        try #"{"version": 1, "streams": {"gyroscope": {"qos": 7}}}"#
            .write(toFile: directory + "/desired/group-lab.json", atomically: true, encoding: .utf8)
        let check = ProcessRunner(executable: AgentProcess.executable, arguments: ["check-config", "--explain", path])
        try check.start()
        #expect(await check.waitForExit(timeout: 10) == 0)
        let lines = check.standardOutput.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.contains("streams.accelerometer.rate_hz 100 fleet v3"))
        #expect(lines.contains("streams.gyroscope.qos 0 config.yaml"))
        #expect(lines.contains("desired documents kept: fleet v3"))
        #expect(lines.contains { $0.hasPrefix("problem:") && $0.contains("streams.gyroscope.qos: 7 is out of range") })
    }
}
