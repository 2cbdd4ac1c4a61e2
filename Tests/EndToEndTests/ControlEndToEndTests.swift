import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import Foundation
import MotionWire
import TestSupport
import Testing

/// The operator CLI (`motion-agent ctl`) and SIGHUP against real agents over a real broker: what needs the binary
/// or the process. The commands' logic runs in the simulation (Tests/AgentSimulationTests).
@Suite(.timeLimit(.minutes(5)), .serialized) struct ControlEndToEndTests {
    /// Runs `motion-agent ctl` and returns its exit code and output lines.
    static func ctl(
        _ broker: MosquittoBroker,
        _ arguments: [String],
        protocolVersion: String = "v5"
    ) async throws -> (Int32?, [String]) {
        let runner = ProcessRunner(
            executable: AgentProcess.executable,
            arguments: ["ctl", "--port", "\(broker.port)", "--protocol", protocolVersion, "--timeout", "4"] + arguments
        )
        try runner.start()
        let code = await runner.waitForExit(timeout: 20)
        return (code, runner.standardOutput.split(separator: "\n").map(String.init))
    }

    /// `motion-agent ctl` reading the replies of real agents through a real broker: by correlation data on its
    /// response topic from every member of the fleet (MQTT 5), and by id on the device's reply topic (MQTT 3.1.1,
    /// which has no response topic). What the agents do with commands — their effect on the streams, replies on
    /// both protocols, fleet and group addressing, commands sent while away, persistence, reload-config, batching —
    /// is the agent's logic and runs in the simulation (Tests/AgentSimulationTests/ControlCommandSimulationTests);
    /// this stays for the binary.
    @Test func ctlReadsTheRepliesOfEveryFleetMemberAndOverMQTT311() async throws {
        let broker = try await MosquittoBroker.started()
        let a = try AgentProcess(
            config: AgentProcess.config(device: "fleet-a", port: broker.port, extra: "control:\n  groups: [lab]\n")
        )
        let b = try AgentProcess(config: AgentProcess.config(device: "fleet-b", port: broker.port))
        defer {
            a.runner.kill()
            b.runner.kill()
        }
        let births = try await CapturingSubscriber(broker: broker, filters: ["motion/+/status"])
        try await births.waitFor(count: 2, timeout: 20)
        let (fleetCode, fleetLines) = try await Self.ctl(broker, ["--fleet", "ping"])
        #expect(fleetCode == 0)
        #expect(
            Set(fleetLines.compactMap { $0.split(separator: "\t").first.map(String.init) }) == ["fleet-a", "fleet-b"],
            "\(fleetLines)"
        )
        let (groupCode, groupLines) = try await Self.ctl(broker, ["--group", "lab", "ping"])
        #expect(groupCode == 0)
        #expect(
            groupLines.compactMap { $0.split(separator: "\t").first.map(String.init) } == ["fleet-a"],
            "\(groupLines)"
        )
        let (code, lines) = try await Self.ctl(broker, ["--device", "fleet-b", "ping"], protocolVersion: "v311")
        #expect(code == 0 && lines.first?.hasPrefix("fleet-b\tok\t200") == true, "\(lines)")
        await births.close()
    }

    /// SIGHUP re-reads config.yaml: the signal's handling is the process's (the simulation runs without signals).
    /// `reload-config`, which enters the same door (`ControlPlane.reload`), and an invalid file are tested in the
    /// simulation (ControlCommandSimulationTests).
    @Test func sighupAppliesAChangedConfigFile() async throws {
        let broker = try await MosquittoBroker.started()
        let agent = try AgentProcess(config: AgentProcess.config(device: "e2e-reload", port: broker.port))
        defer { agent.runner.kill() }
        let status = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-reload/status"])
        try await status.waitFor(count: 1, timeout: 20)
        @Sendable func accelerometerRate(_ messages: [InboundMessage]) -> Double? {
            let last = messages.last.map(payloadJSON)
            return ((last?["streams"] as? [String: Any])?["accelerometer"] as? [String: Any])?["requestedRateHz"]
                as? Double
        }
        #expect(accelerometerRate(status.messages) == 50)
        let original = try String(contentsOfFile: agent.configPath, encoding: .utf8)
        try (original + "\nstreams:\n  accelerometer:\n    rate_hz: 10\n").write(
            toFile: agent.configPath,
            atomically: true,
            encoding: .utf8
        )
        agent.runner.signal(SIGHUP)
        try await status.waitUntil(timeout: 10, "the reloaded rate in status") { accelerometerRate($0) == 10 }
        #expect(agent.runner.isRunning)
        await status.close()
    }
}

/// `motion-agent sub`: a device's streams, decoded, one line per message.
@Suite(.timeLimit(.minutes(5))) struct SubscribeCommandEndToEndTests {
    @Test func subPrintsDecodedStreamLines() async throws {
        let broker = try await MosquittoBroker.started()
        let agent = try AgentProcess(config: AgentProcess.config(device: "e2e-sub", port: broker.port))
        defer { agent.runner.kill() }
        let sub = ProcessRunner(
            executable: AgentProcess.executable,
            arguments: ["sub", "--port", "\(broker.port)", "--stream", "accelerometer", "--count", "5", "e2e-sub"]
        )
        try sub.start()
        #expect(await sub.waitForExit(timeout: 30) == 0, "\(sub.standardError)")
        let lines = sub.standardOutput.split(separator: "\n")
        #expect(lines.count == 5, "\(lines)")
        for line in lines {
            #expect(line.hasPrefix("accelerometer\tseq="), "\(line)")
            #expect(line.contains("acceleration=("), "\(line)")
        }
    }
}

/// `motion-agent ctl` reads the agent's command table: its help lists every command, and it refuses a bad
/// command with the agent's own words before connecting anywhere.
@Suite(.timeLimit(.minutes(5))) struct ControlCommandLineTableTests {
    @Test func helpListsEveryCommandOfTheTable() async throws {
        let help = ProcessRunner(executable: AgentProcess.executable, arguments: ["ctl", "--help"])
        try help.start()
        #expect(await help.waitForExit(timeout: 20) == 0)
        for d in ControlCommandDescriptor.table {
            #expect(d.summary.count < 60, "\(d.name): a summary that help would wrap")
            #expect(help.standardOutput.contains("\(d.name) — \(d.summary)"), "\(d.name): \(help.standardOutput)")
            for example in d.examples {
                let line = "      " + (example.isEmpty ? d.name : "\(d.name) \(example)") + "\n"
                #expect(help.standardOutput.contains(line), "\(line)")
            }
        }
    }

    /// `fleet set|unset|clear` named the version to publish `--version`, which the root command's version flag
    /// also claims: help listed both. Each edit command now has one `--document-version`.
    @Test(arguments: ["set", "unset", "clear"])
    func fleetEditsNameTheDocumentsVersionApartFromTheToolsVersion(_ command: String) async throws {
        let help = ProcessRunner(executable: AgentProcess.executable, arguments: ["fleet", command, "--help"])
        try help.start()
        #expect(await help.waitForExit(timeout: 20) == 0)
        let lines = help.standardOutput.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains { $0.hasPrefix("--document-version <document-version>") }, "\(help.standardOutput)")
        #expect(lines.filter { $0.hasPrefix("--version") }.count == 1, "\(help.standardOutput)")
    }

    @Test func aBadCommandIsRefusedLocallyWithTheAgentsMessage() async throws {
        let missing = ProcessRunner(
            executable: AgentProcess.executable,
            arguments: ["ctl", "--port", "1", "--device", "nobody", "set-rate", "stream=gyroscope"]
        )
        try missing.start()
        #expect(await missing.waitForExit(timeout: 20) == 64)
        #expect(missing.standardError.contains(#"exactly one of "rate_hz" (Hz) or "interval_s" (seconds)"#))
        let unknown = ProcessRunner(
            executable: AgentProcess.executable,
            arguments: ["ctl", "--port", "1", "--device", "nobody", "reboot"]
        )
        try unknown.start()
        #expect(await unknown.waitForExit(timeout: 20) == 64)
        #expect(unknown.standardError.contains("unknown command \"reboot\""))
    }
}
