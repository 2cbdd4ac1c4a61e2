import AgentControl
import AgentPorts
import Foundation
import TestSupport
import Testing

/// The operators' tool for fleet desired state (`motion-agent fleet`) against real agents through a real broker.
/// What the agents do with the documents — layers, convergence of new and offline devices, refusals and their
/// reports, signing, config.yaml edits — is the agent's logic and runs in the simulation
/// (Tests/AgentSimulationTests/DesiredStateSimulationTests); what stays here is about the tool.
@Suite(.timeLimit(.minutes(10)), .serialized) struct DesiredStateEndToEndTests {
    /// Publishes `payload` retained (QoS 1) on `topic` with mosquitto_pub; an empty payload clears the topic.
    static func publishRetained(_ broker: MosquittoBroker, _ topic: String, _ payload: String) async throws {
        let arguments =
            ["-h", broker.host, "-p", "\(broker.port)", "-q", "1", "-r", "-t", topic]
            + (payload.isEmpty ? ["-n"] : ["-m", payload])
        let runner = ProcessRunner(executable: "/usr/bin/mosquitto_pub", arguments: arguments)
        try runner.start()
        #expect(await runner.waitForExit(timeout: 10) == 0, "mosquitto_pub: \(runner.standardError)")
    }

    /// The last online status among `messages`, as JSON, with every setting's value and source from the device's
    /// newest `{root}/configuration` among them under `configuration.settings` (the status carries only their
    /// summary; the agent publishes the account right after the status it goes with).
    static func lastBirth(in messages: [InboundMessage]) -> [String: Any] {
        var birth =
            messages.last { $0.topic.hasSuffix("/status") && payloadJSON($0)["state"] as? String == "online" }
            .map(payloadJSON) ?? [:]
        guard let device = birth["device"] as? String,
            let account = messages.last(where: { $0.topic == "motion/\(device)/configuration" }).map(payloadJSON)
        else { return birth }
        var configuration = birth["configuration"] as? [String: Any] ?? [:]
        configuration["settings"] = account["settings"]
        birth["configuration"] = configuration
        return birth
    }

    /// The last online status a subscriber to the device's status and configuration topics received (`lastBirth(in:)`).
    static func lastBirth(_ status: CapturingSubscriber) -> [String: Any] {
        lastBirth(in: status.messages)
    }

    /// A device's status topic and its configuration topic, for a subscriber whose `lastBirth` shows every setting.
    static func topics(_ device: String) -> [String] {
        ["motion/\(device)/status", "motion/\(device)/configuration"]
    }

    /// `configuration.settings[key]` of a `lastBirth` document: its value and source.
    static func setting(_ status: [String: Any], _ key: String) -> (value: String?, source: String?) {
        let settings = (status["configuration"] as? [String: Any])?["settings"] as? [String: Any]
        let entry = settings?[key] as? [String: Any]
        return (entry?["value"] as? String, entry?["source"] as? String)
    }

    static func desired(_ status: [String: Any]) -> [String: Int] {
        ((status["configuration"] as? [String: Any])?["desired"] as? [String: Int]) ?? [:]
    }

    /// Waits until the device's latest online status has `key` = `value`.
    static func waitFor(
        _ status: CapturingSubscriber,
        _ key: String,
        _ value: String,
        timeout: Double = 20
    ) async throws {
        try await status.waitUntil(timeout: timeout, "\(key) = \(value) in the status") { messages in
            setting(lastBirth(in: messages), key).value == value
        }
    }

    /// Waits until the device's latest status reports `configuration.<field>` (`refused`, `ignored`); returns
    /// that latest status and the report.
    static func waitForReport(
        _ status: CapturingSubscriber,
        _ field: String
    ) async throws -> (status: [String: Any], report: [String: Any]) {
        try await status.waitUntil(timeout: 20, "configuration.\(field) in the status") { messages in
            let last = messages.last { $0.topic.hasSuffix("/status") }.map(payloadJSON) ?? [:]
            return (last["configuration"] as? [String: Any])?[field] != nil
        }
        let birth = lastBirth(status)
        let report = try #require((birth["configuration"] as? [String: Any])?[field] as? [String: Any])
        return (birth, report)
    }

    /// `motion-agent fleet set --signing-key` against a signing agent: it signs and publishes a document the agent
    /// applies, will not build on a retained document it cannot verify (an unsigned one the agent refused) and says
    /// to use `--replace`, with which it publishes one version above the one the device reports. The agent's side
    /// — unsigned documents refused and reported, the version in force kept — runs in the simulation
    /// (DesiredStateSimulationTests); this stays for the tool.
    @Test func fleetSetWithASigningKeyDoesNotBuildOnAnUnsignedDocumentAndReplacesIt() async throws {
        let broker = try await MosquittoBroker.started()
        let directory = NSTemporaryDirectory() + "motion-agent-e2e-signed-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let keyPath = directory + "/operator.key"
        let key = try OperatorSigningKey(id: "ops-desired", privateKey: Array(repeating: 3, count: 32))
        try key.fileText.write(toFile: keyPath, atomically: true, encoding: .utf8)
        chmod(keyPath, 0o600)
        try (key.trustLine + "\n").write(toFile: directory + "/trusted.keys", atomically: true, encoding: .utf8)
        let status = try await CapturingSubscriber(broker: broker, filters: Self.topics("e2e-signed"))
        let agent = try AgentProcess(
            config: AgentProcess.config(
                device: "e2e-signed",
                port: broker.port,
                extra: "control:\n  trusted_keys_file: trusted.keys\n"
            ),
            directory: directory
        )
        defer { agent.runner.kill() }
        try await status.waitFor(count: 1, timeout: 20)

        var (code, output) = try await Self.fleet(
            broker,
            [
                "set", "--device", "e2e-signed", "--signing-key", keyPath, "streams.gyroscope.rate_hz=25", "--wait",
                "20",
            ]
        )
        #expect(code == 0, "\(output)")
        try await Self.waitFor(status, "streams.gyroscope.rate_hz", "25")
        #expect(Self.setting(Self.lastBirth(status), "streams.gyroscope.rate_hz").source == "device v1")

        // An unsigned document, retained over the signed one (the agent refuses it).
        try await Self.publishRetained(
            broker,
            "motion/e2e-signed/desired",
            #"{"version": 2, "streams": {"gyroscope": {"rate_hz": 10}}}"#
        )
        _ = try await Self.waitForReport(status, "refused")
        // The operator's tool will not build on a retained document it cannot verify...
        (code, output) = try await Self.fleet(
            broker,
            ["set", "--device", "e2e-signed", "--signing-key", keyPath, "streams.gyroscope.rate_hz=20", "--wait", "20"]
        )
        #expect(code != 0 && output.contains("--replace"), "\(output)")
        // ...and with --replace signs a fresh one: the next version applies over the refused one.
        (code, output) = try await Self.fleet(
            broker,
            [
                "set", "--device", "e2e-signed", "--signing-key", keyPath, "--replace", "streams.gyroscope.rate_hz=20",
                "--wait",
                "20",
            ]
        )
        #expect(code == 0, "\(output)")
        try await Self.waitFor(status, "streams.gyroscope.rate_hz", "20")
        // One above the version the device reports (the refused document's 2 was never taken as a version).
        #expect(Self.desired(Self.lastBirth(status)) == ["device": 2])
        await status.close()
    }

    /// Runs `motion-agent fleet …` against `broker`; returns its exit code and output.
    static func fleet(_ broker: MosquittoBroker, _ arguments: [String]) async throws -> (Int32?, String) {
        let runner = ProcessRunner(
            executable: AgentProcess.executable,
            arguments: ["fleet"] + [arguments[0], "--port", "\(broker.port)"] + arguments.dropFirst()
        )
        try runner.start()
        let code = await runner.waitForExit(timeout: 30)
        return (code, runner.standardOutput + runner.standardError)
    }

    /// `fleet set`, `get` and `status` read and count what real agents report (applied, offline, the problem
    /// first): about the tool, so it stays end to end. How the devices converge runs in the simulation.
    @Test func fleetSetGetAndStatusAgainstThreeAgentsOneOffline() async throws {
        let broker = try await MosquittoBroker.started()
        let births = try await CapturingSubscriber(broker: broker, filters: ["motion/+/status"])
        let devices = ["e2e-fleet-a", "e2e-fleet-b", "e2e-fleet-c"]
        var agents: [AgentProcess] = []
        for device in devices {
            agents.append(try AgentProcess(config: AgentProcess.config(device: device, port: broker.port)))
        }
        defer { for agent in agents { agent.runner.kill() } }
        try await births.waitUntil(timeout: 20, "three births") { messages in
            Set(messages.compactMap { payloadJSON($0)["device"] as? String }).count == 3
        }
        agents[2].runner.terminate()
        #expect(await agents[2].runner.waitForExit(timeout: 15) == 0)

        let (setCode, setOutput) = try await Self.fleet(
            broker,
            ["set", "--fleet", "streams.gyroscope.rate_hz=20", "--wait", "15"]
        )
        #expect(setCode == 0, "\(setOutput)")
        #expect(setOutput.contains("published fleet v1 on motion/fleet/desired"), "\(setOutput)")
        #expect(setOutput.contains("2 of 3 applied v1"), "\(setOutput)")
        #expect(setOutput.contains("1 offline: e2e-fleet-c"), "\(setOutput)")

        let (refusedCode, refusedOutput) = try await Self.fleet(
            broker,
            ["set", "--fleet", "streams.gyroscope.rate_hz=5000", "--wait", "0"]
        )
        #expect(refusedCode != 0)
        #expect(refusedOutput.contains("5000 is out of range"), "\(refusedOutput)")

        let (getCode, getOutput) = try await Self.fleet(broker, ["get", "--fleet"])
        #expect(getCode == 0)
        #expect(getOutput.contains(#""version":1"#) && getOutput.contains(#""rate_hz":20"#), "\(getOutput)")

        // The offline device is the problem, listed first.
        let (statusCode, statusOutput) = try await Self.fleet(broker, ["status"])
        #expect(statusCode == 1, "\(statusOutput)")
        let lines = statusOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("e2e-fleet-c\tOFFLINE") == true, "\(statusOutput)")
        #expect(lines.contains { $0.hasPrefix("e2e-fleet-a\tonline") && $0.contains("fleet v1") }, "\(statusOutput)")
        // Read at QoS 0 (`--read-qos 0`, for NATS) the tool sees the same; a QoS it does not offer is refused.
        let (qos0Code, qos0Output) = try await Self.fleet(broker, ["status", "--read-qos", "0"])
        let rows = { (output: String) in output.split(separator: "\n").map { $0.split(separator: "\t").prefix(2) } }
        #expect(qos0Code == 1 && rows(qos0Output) == rows(statusOutput), "\(qos0Output)")
        let (qos2Code, qos2Output) = try await Self.fleet(broker, ["status", "--read-qos", "2"])
        #expect(qos2Code != 0 && qos2Output.contains("--read-qos 2 is not 0 or 1"), "\(qos2Output)")

        // Back online, it converges on its own, and the fleet has no problem left.
        agents[2] = try AgentProcess(
            config: try String(contentsOfFile: agents[2].configPath, encoding: .utf8),
            directory: agents[2].directory
        )
        try await births.waitUntil(timeout: 20, "e2e-fleet-c on fleet v1") { messages in
            let last = messages.last { payloadJSON($0)["device"] as? String == "e2e-fleet-c" }.map(payloadJSON) ?? [:]
            return Self.desired(last)["fleet"] == 1 && last["state"] as? String == "online"
        }
        let (finalCode, finalOutput) = try await Self.fleet(broker, ["status", "--json"])
        #expect(finalCode == 0, "\(finalOutput)")
        #expect(finalOutput.contains(#""device":"e2e-fleet-c""#), "\(finalOutput)")
        await births.close()
    }
}
