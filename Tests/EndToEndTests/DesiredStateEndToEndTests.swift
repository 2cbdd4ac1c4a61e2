import AgentControl
import AgentPorts
import Foundation
import TestSupport
import Testing

/// Fleet desired state through a real broker and the real agent (docs/fleet.md): retained documents reach a
/// device whenever it connects, layers and commands combine per key, bad or old documents are refused and
/// reported, and what a device was told survives restarts without the broker.
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

    @Test func aNewDeviceConvergesOnItsFirstConnectionAnOfflineOneOnReconnectAndBootsWithoutTheBrokerOnWhatItKept()
        async throws
    {
        let broker = try await MosquittoBroker.started()
        // Published before the device ever ran: the broker holds it for the device's first connection.
        try await Self.publishRetained(
            broker,
            "motion/fleet/desired",
            #"{"version": 1, "streams": {"accelerometer": {"rate_hz": 10}}}"#
        )
        let status = try await CapturingSubscriber(broker: broker, filters: Self.topics("e2e-new"))
        let first = try AgentProcess(config: AgentProcess.config(device: "e2e-new", port: broker.port))
        try await Self.waitFor(status, "streams.accelerometer.rate_hz", "10")
        let birth = Self.lastBirth(status)
        #expect(Self.setting(birth, "streams.accelerometer.rate_hz").source == "fleet v1")
        #expect(Self.desired(birth) == ["fleet": 1])
        #expect(
            ((birth["streams"] as? [String: Any])?["accelerometer"] as? [String: Any])?["requestedRateHz"] as? Double
                == 10
        )

        // Offline while the fleet moves on: the new version arrives at the next connection.
        first.runner.terminate()
        #expect(await first.runner.waitForExit(timeout: 15) == 0)
        try await Self.publishRetained(
            broker,
            "motion/fleet/desired",
            #"{"version": 2, "streams": {"accelerometer": {"rate_hz": 20}}}"#
        )
        let second = try AgentProcess(
            config: try String(contentsOfFile: first.configPath, encoding: .utf8),
            directory: first.directory
        )
        try await Self.waitFor(status, "streams.accelerometer.rate_hz", "20")
        #expect(Self.setting(Self.lastBirth(status), "streams.accelerometer.rate_hz").source == "fleet v2")
        second.runner.terminate()
        #expect(await second.runner.waitForExit(timeout: 15) == 0)
        await status.close()

        // The broker down at boot: the device runs the desired state it kept until a broker answers.
        let late = try MosquittoBroker()
        let third = try AgentProcess(
            config: AgentProcess.config(device: "e2e-new", port: late.port),
            directory: first.directory
        )
        defer { third.runner.kill() }
        #expect(
            await third.runner.waitForOutput(containing: "desired state kept from the last run: fleet v2", timeout: 20),
            "\(third.runner.standardError)"
        )
        #expect(await third.runner.waitForOutput(containing: "retrying in", timeout: 20), "it tried the broker")
        third.runner.terminate()
        #expect(await third.runner.waitForExit(timeout: 15) == 0)

        // The operator clears the fleet layer while the device is away: the clear is a retained document, which
        // the broker hands over at the next connection. (An empty payload would change nothing: on a cluster a
        // node that retains nothing proves nothing.)
        try await Self.publishRetained(broker, "motion/fleet/desired", #"{"version": 3, "clear": true}"#)
        let fourth = try AgentProcess(
            config: AgentProcess.config(device: "e2e-new", port: broker.port),
            directory: first.directory
        )
        defer { fourth.runner.kill() }
        #expect(
            await fourth.runner.waitForOutput(
                containing: "fleet desired state cleared by v3 from motion/fleet/desired",
                timeout: 20
            ),
            "\(fourth.runner.standardError)"
        )
        let cleared = try await CapturingSubscriber(broker: broker, filters: Self.topics("e2e-new"))
        try await cleared.waitUntil(timeout: 20, "the fleet layer gone from the retained status") { messages in
            let last = messages.last { $0.topic.hasSuffix("/status") }.map(payloadJSON) ?? [:]
            return last["state"] as? String == "online" && Self.desired(last) == ["fleet": 3]
        }
        #expect(Self.setting(Self.lastBirth(cleared), "streams.accelerometer.rate_hz").source == "config.yaml")
        await cleared.close()
    }

    @Test func layersCombinePerKeyAndTheLastWriterOfEachKeyWins() async throws {
        let broker = try await MosquittoBroker.started()
        let status = try await CapturingSubscriber(broker: broker, filters: Self.topics("e2e-layers"))
        let agent = try AgentProcess(
            config: AgentProcess.config(
                device: "e2e-layers",
                port: broker.port,
                extra: "control:\n  groups: [lab, floor-2]\n"
            )
        )
        defer { agent.runner.kill() }
        try await status.waitFor(count: 1, timeout: 20)
        try await Self.publishRetained(
            broker,
            "motion/fleet/desired",
            #"{"version": 1, "streams": {"accelerometer": {"rate_hz": 10}, "gyroscope": {"rate_hz": 10}, "magnetometer": {"rate_hz": 5}}}"#
        )
        try await Self.publishRetained(
            broker,
            "motion/group/lab/desired",
            #"{"version": 4, "streams": {"accelerometer": {"rate_hz": 20}, "gyroscope": {"rate_hz": 20}}}"#
        )
        try await Self.publishRetained(
            broker,
            "motion/group/floor-2/desired",
            #"{"version": 2, "streams": {"accelerometer": {"rate_hz": 25}}}"#
        )
        try await Self.publishRetained(
            broker,
            "motion/e2e-layers/desired",
            #"{"version": 7, "streams": {"accelerometer": {"qos": 1}}}"#
        )
        try await Self.waitFor(status, "streams.accelerometer.qos", "1")
        var birth = Self.lastBirth(status)
        #expect(Self.setting(birth, "streams.magnetometer.rate_hz") == ("5", "fleet v1"))
        #expect(Self.setting(birth, "streams.gyroscope.rate_hz") == ("20", "group lab v4"))
        #expect(Self.setting(birth, "streams.accelerometer.rate_hz") == ("25", "group floor-2 v2"))
        #expect(Self.setting(birth, "streams.accelerometer.qos") == ("1", "device v7"))
        #expect(Self.setting(birth, "streams.accelerometer.enabled").source == "config.yaml")
        #expect(Self.desired(birth) == ["fleet": 1, "group lab": 4, "group floor-2": 2, "device": 7])

        // A command sets one key on top of every layer…
        let (code, lines) = try await ControlEndToEndTests.ctl(
            broker,
            ["--device", "e2e-layers", "set-rate", "stream=gyroscope", "rate_hz=40"]
        )
        #expect(code == 0, "\(lines)")
        try await Self.waitFor(status, "streams.gyroscope.rate_hz", "40")
        birth = Self.lastBirth(status)
        #expect(Self.setting(birth, "streams.gyroscope.rate_hz").source?.hasPrefix("command ") == true)
        #expect(Self.setting(birth, "streams.accelerometer.rate_hz") == ("25", "group floor-2 v2"))
        // …until a newer document changes that key: the document is the last writer.
        try await Self.publishRetained(
            broker,
            "motion/group/lab/desired",
            #"{"version": 5, "streams": {"accelerometer": {"rate_hz": 20}, "gyroscope": {"rate_hz": 30}}}"#
        )
        try await Self.waitFor(status, "streams.gyroscope.rate_hz", "30")
        #expect(Self.setting(Self.lastBirth(status), "streams.gyroscope.rate_hz").source == "group lab v5")
        await status.close()
    }

    /// A burst of refused documents beyond the refusals' budget (a burst of 5, then 2 a second) does not become a
    /// status each, yet the status ends on the last of them: its report, held back, follows once the budget
    /// has a token again (the agent waits for that only while a report is owed: no timer while idle).
    @Test func theLastOfARefusedBurstReachesTheStatusOnceTheBudgetRefills() async throws {
        let broker = try await MosquittoBroker.started()
        let status = try await CapturingSubscriber(broker: broker, filters: Self.topics("e2e-burst"))
        let agent = try AgentProcess(config: AgentProcess.config(device: "e2e-burst", port: broker.port))
        defer { agent.runner.kill() }
        try await status.waitFor(count: 1, timeout: 20)
        let topic = "motion/e2e-burst/desired"
        for index in 1...12 {
            let document = Array(#"{"version": \#(index), "streams": {"nonsense-\#(index)": {}}}"#.utf8)
            _ = try document.withUnsafeBytes {
                try status.client.publish(topic: topic, payload: $0, qos: 1, retain: true)
            }
        }
        @Sendable func lastRefusal(_ messages: [InboundMessage]) -> String? {
            let last = messages.last { $0.topic.hasSuffix("/status") }.map(payloadJSON) ?? [:]
            return ((last["configuration"] as? [String: Any])?["refused"] as? [String: Any])?["reason"] as? String
        }
        try await status.waitUntil(timeout: 20, "the last document's refusal in the status") { messages in
            lastRefusal(messages)?.contains("nonsense-12") == true
        }
        let reports = status.messages(on: "motion/e2e-burst/status").count
        #expect(reports < 12, "\(reports) statuses for 12 refused documents: the budget holds reports back")
        await status.close()
    }

    @Test func badAndOlderDocumentsAreRefusedAndReportedAndOnlyAClearRemovesTheLayer() async throws {
        let broker = try await MosquittoBroker.started()
        let status = try await CapturingSubscriber(broker: broker, filters: Self.topics("e2e-refuse"))
        let agent = try AgentProcess(config: AgentProcess.config(device: "e2e-refuse", port: broker.port))
        defer { agent.runner.kill() }
        try await status.waitFor(count: 1, timeout: 20)
        let topic = "motion/e2e-refuse/desired"
        try await Self.publishRetained(broker, topic, #"{"version": 3, "streams": {"gyroscope": {"rate_hz": 25}}}"#)
        try await Self.waitFor(status, "streams.gyroscope.rate_hz", "25")

        // Out of range: refused whole (the valid key in it too), reported with the config schema's words.
        try await Self.publishRetained(
            broker,
            topic,
            #"{"version": 4, "streams": {"gyroscope": {"rate_hz": 5000}, "magnetometer": {"rate_hz": 2}}}"#
        )
        var (birth, refused) = try await Self.waitForReport(status, "refused")
        #expect(refused["layer"] as? String == "device")
        #expect((refused["reason"] as? String)?.contains("streams.gyroscope.rate_hz") == true)
        #expect((refused["reason"] as? String)?.contains("5000 is out of range") == true)
        #expect(Self.setting(birth, "streams.gyroscope.rate_hz") == ("25", "device v3"))
        #expect(Self.setting(birth, "streams.magnetometer.rate_hz").source == "config.yaml")
        #expect(Self.desired(birth) == ["device": 3])

        // Older than the one in force: ignored and reported, and v3 stays.
        try await Self.publishRetained(broker, topic, #"{"version": 2, "streams": {"gyroscope": {"rate_hz": 10}}}"#)
        let ignored: [String: Any]
        (birth, ignored) = try await Self.waitForReport(status, "ignored")
        #expect(ignored["layer"] as? String == "device")
        #expect(ignored["version"] as? Int == 2)
        #expect((ignored["reason"] as? String)?.contains("older than v3 in force") == true)
        #expect(Self.setting(birth, "streams.gyroscope.rate_hz") == ("25", "device v3"))
        #expect(Self.desired(birth) == ["device": 3])

        // An empty retained payload is not a clear: the layer stays. A clear document removes it: config.yaml's
        // value again, and the clear's version in force.
        try await Self.publishRetained(broker, topic, "")
        try await Task.sleep(for: .seconds(1))
        #expect(Self.setting(Self.lastBirth(status), "streams.gyroscope.rate_hz") == ("25", "device v3"))
        try await Self.publishRetained(broker, topic, #"{"version": 4, "clear": true}"#)
        try await Self.waitFor(status, "streams.gyroscope.rate_hz", "50")
        #expect(Self.desired(Self.lastBirth(status)) == ["device": 4])
        await status.close()
    }

    /// With control.trusted_keys_file set, a desired document must be signed like a command: an unsigned one is
    /// refused whole and reported, the version in force stays, and `fleet set --signing-key` is applied — after
    /// `--replace`, since the retained document it would build on is the refused one.
    @Test func anUnsignedDocumentIsRefusedWhenSigningIsOnAndASignedOneApplies() async throws {
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

        // Unsigned, with a higher version: refused whole, with the reason, and v1 stays in force.
        try await Self.publishRetained(
            broker,
            "motion/e2e-signed/desired",
            #"{"version": 2, "streams": {"gyroscope": {"rate_hz": 10}}}"#
        )
        let (birth, refused) = try await Self.waitForReport(status, "refused")
        #expect(refused["layer"] as? String == "device")
        #expect((refused["reason"] as? String)?.contains("is not signed") == true, "\(refused)")
        #expect(Self.setting(birth, "streams.gyroscope.rate_hz") == ("25", "device v1"))
        #expect(Self.desired(birth) == ["device": 1])

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

    /// Round one's trap: one command pinned every stream over config.yaml for good. Now a command pins only
    /// the key it names; a config.yaml edit of any other key applies after SIGHUP and after a restart.
    @Test func aConfigEditOfAKeyNoLayerAboveSetsAppliesAfterSighupAndAfterARestart() async throws {
        let broker = try await MosquittoBroker.started()
        let status = try await CapturingSubscriber(broker: broker, filters: Self.topics("e2e-trap"))
        let agent = try AgentProcess(config: AgentProcess.config(device: "e2e-trap", port: broker.port))
        try await status.waitFor(count: 1, timeout: 20)
        let (code, lines) = try await ControlEndToEndTests.ctl(
            broker,
            ["--device", "e2e-trap", "set-rate", "stream=accelerometer", "rate_hz=100"]
        )
        #expect(code == 0, "\(lines)")
        try await Self.waitFor(status, "streams.accelerometer.rate_hz", "100")

        let original = try String(contentsOfFile: agent.configPath, encoding: .utf8)
        try (original + "\nstreams:\n  gyroscope:\n    rate_hz: 20\n").write(
            toFile: agent.configPath,
            atomically: true,
            encoding: .utf8
        )
        agent.runner.signal(SIGHUP)
        try await Self.waitFor(status, "streams.gyroscope.rate_hz", "20")
        #expect(Self.setting(Self.lastBirth(status), "streams.accelerometer.rate_hz").value == "100")

        try (original + "\nstreams:\n  gyroscope:\n    rate_hz: 25\n").write(
            toFile: agent.configPath,
            atomically: true,
            encoding: .utf8
        )
        agent.runner.terminate()
        #expect(await agent.runner.waitForExit(timeout: 15) == 0)
        let restarted = try AgentProcess(
            config: try String(contentsOfFile: agent.configPath, encoding: .utf8),
            directory: agent.directory
        )
        defer { restarted.runner.kill() }
        try await Self.waitFor(status, "streams.gyroscope.rate_hz", "25")
        let birth = Self.lastBirth(status)
        #expect(Self.setting(birth, "streams.gyroscope.rate_hz") == ("25", "config.yaml"))
        #expect(Self.setting(birth, "streams.accelerometer.rate_hz").value == "100")
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
