import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import Foundation
import MotionWire
import TestSupport
import Testing

/// Commands over a real broker to the real agent, through the operator CLI (`motion-agent ctl`) and raw MQTT:
/// each command's effect on the live streams, replies on MQTT 5 and 3.1.1, fleet and group addressing, and
/// persistence across a restart.
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

    static func rate(_ messages: [InboundMessage]) -> Double {
        let t = messages.compactMap { payloadJSON($0)["timestamp"] as? Double }
        guard t.count > 2, let first = t.first, let last = t.last, last > first else { return 0 }
        return Double(t.count - 1) / (last - first)
    }

    /// The rate from the median interval between samples: samples queued at the old rate before a change
    /// (more of them on a loaded machine) do not move it, and a stream still at the old rate does.
    static func medianRate(_ messages: [InboundMessage]) -> Double {
        let t = messages.compactMap { payloadJSON($0)["timestamp"] as? Double }
        let intervals = zip(t.dropFirst(), t).map { $0 - $1 }.sorted()
        guard intervals.count > 2, intervals[intervals.count / 2] > 0 else { return 0 }
        return 1 / intervals[intervals.count / 2]
    }

    @Test func commandsChangeTheLiveStreamsAndAreAnswered() async throws {
        let broker = try await MosquittoBroker.started()
        let agent = try AgentProcess(config: AgentProcess.config(device: "e2e-ctl", port: broker.port))
        defer { agent.runner.kill() }
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-ctl/#"])
        try await subscriber.waitFor(count: 20, on: "motion/e2e-ctl/accelerometer", timeout: 20)

        // set-rate 20 → the subscriber measures 20 Hz ± 10 %.
        let (code, lines) = try await Self.ctl(
            broker,
            ["--device", "e2e-ctl", "set-rate", "stream=accelerometer", "rate_hz=20"]
        )
        #expect(code == 0, "\(lines)")
        let reply = try #require(lines.first)
        #expect(reply.hasPrefix("e2e-ctl\tok\t200"), "\(reply)")
        #expect(reply.contains("\"rateHz\":20"), "the reply gives the effective rate: \(reply)")
        let mark = subscriber.messages.count
        try await Task.sleep(for: .seconds(3))
        let after = subscriber.messages.dropFirst(mark).filter { $0.topic == "motion/e2e-ctl/accelerometer" }
        #expect(abs(Self.medianRate(Array(after)) - 20) <= 2, "measured \(Self.medianRate(Array(after))) Hz")
        let status = try #require(subscriber.messages(on: "motion/e2e-ctl/status").last.map(payloadJSON))
        #expect(
            ((status["streams"] as? [String: Any])?["accelerometer"] as? [String: Any])?["rateHz"] as? Double == 20,
            "the retained status shows the change at once"
        )

        // stop → nothing more; start → it resumes.
        let (stopCode, _) = try await Self.ctl(broker, ["--device", "e2e-ctl", "stop", "stream=accelerometer"])
        #expect(stopCode == 0)
        try await Task.sleep(for: .milliseconds(300))
        let stoppedAt = subscriber.messages(on: "motion/e2e-ctl/accelerometer").count
        try await Task.sleep(for: .seconds(1.5))
        #expect(
            subscriber.messages(on: "motion/e2e-ctl/accelerometer").count == stoppedAt,
            "stopped streams publish nothing"
        )
        let (startCode, _) = try await Self.ctl(broker, ["--device", "e2e-ctl", "start", "stream=accelerometer"])
        #expect(startCode == 0)
        try await subscriber.waitFor(count: stoppedAt + 10, on: "motion/e2e-ctl/accelerometer", timeout: 10)

        // Reference frame: the device-motion payload says which frame; true north needs a location here.
        let (frameCode, frameLines) = try await Self.ctl(
            broker,
            ["--device", "e2e-ctl", "set-reference-frame", "frame=xMagneticNorthZVertical"]
        )
        #expect(frameCode == 0, "\(frameLines)")
        try await subscriber.waitUntil(timeout: 10, "device motion in the magnetic-north frame") { messages in
            messages.contains { m in
                m.topic == "motion/e2e-ctl/device-motion"
                    && payloadJSON(m)["referenceFrame"] as? String == "xMagneticNorthZVertical"
            }
        }
        let north = try #require(subscriber.messages(on: "motion/e2e-ctl/device-motion").last.map(payloadJSON))
        let heading = try #require(north["heading"] as? Double)
        #expect(heading >= 0 && heading < 360)
        let (refused, refusedLines) = try await Self.ctl(
            broker,
            ["--device", "e2e-ctl", "set-reference-frame", "frame=xTrueNorthZVertical"]
        )
        #expect(refused == 1)
        #expect(
            refusedLines.first?.contains("\t409\t") == true && refusedLines.first?.contains("location") == true,
            "\(refusedLines)"
        )
        await subscriber.close()
    }

    @Test func repliesOnMQTT311GoToTheReplyTopic() async throws {
        let broker = try await MosquittoBroker.started()
        let agent = try AgentProcess(
            config: AgentProcess.config(device: "e2e-v311", port: broker.port, mqttProtocol: "v311")
        )
        defer { agent.runner.kill() }
        let replies = try await CapturingSubscriber(
            broker: broker,
            filters: ["motion/e2e-v311/control/reply"],
            protocolVersion: .v311
        )
        let operatorClient = try await CapturingSubscriber(
            broker: broker,
            filters: ["motion/e2e-v311/status"],
            protocolVersion: .v311
        )
        try await operatorClient.waitFor(count: 1, timeout: 20)
        #expect(await agent.runner.waitForOutput(containing: "connected to the broker", timeout: 5))
        let command = Array(#"{"id":"v311-1","command":"status"}"#.utf8)
        _ = try command.withUnsafeBytes {
            try operatorClient.client.publish(topic: "motion/e2e-v311/control", payload: $0, qos: 1, retain: false)
        }
        try await replies.waitFor(count: 1, timeout: 10)
        let reply = payloadJSON(replies.messages[0])
        #expect(reply["id"] as? String == "v311-1" && reply["ok"] as? Bool == true && reply["code"] as? Int == 200)
        #expect((reply["result"] as? [String: Any])?["state"] as? String == "online")

        // Every bad-input class gets an error reply and changes nothing.
        let bad: [(String, Int)] = [
            ("{not json", 400), (#"{"id":"b2","command":"fly"}"#, 404),
            (#"{"id":"b3","command":"set-rate","stream":"gyroscope","rate_hz":-4}"#, 400),
            (#"{"id":"b4","command":"start","stream":"thermometer"}"#, 404),
        ]
        for (text, _) in bad {
            _ = try Array(text.utf8).withUnsafeBytes {
                try operatorClient.client.publish(topic: "motion/e2e-v311/control", payload: $0, qos: 1, retain: false)
            }
        }
        try await replies.waitFor(count: 1 + bad.count, timeout: 10)
        let codes = replies.messages.dropFirst().map { payloadJSON($0)["code"] as? Int }
        #expect(codes == bad.map { $0.1 })
        // The operator CLI over 3.1.1 finds the reply by id on the device's reply topic.
        let (code, lines) = try await Self.ctl(broker, ["--device", "e2e-v311", "ping"], protocolVersion: "v311")
        #expect(code == 0 && lines.first?.hasPrefix("e2e-v311\tok\t200") == true, "\(lines)")
        await replies.close()
        await operatorClient.close()
    }

    @Test func fleetAndGroupCommandsReachTheirMembers() async throws {
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
        await births.close()
    }

    /// The agent's subscriptions follow `mqtt.clean_session` (AgentBuilder.subscriptionQoS): in a persistent
    /// session they are QoS 1, so a command sent while the agent is away waits at the broker and is answered when
    /// it is back; in a clean session (QoS 0, the default) nothing waits, and the next command is answered.
    @Test(arguments: [false, true]) func aCommandSentWhileTheAgentIsAwayWaitsOnlyInAPersistentSession(
        clean: Bool
    ) async throws {
        let broker = try await MosquittoBroker.started()
        let device = clean ? "e2e-away-clean" : "e2e-away-kept"
        let config = AgentProcess.config(device: device, port: broker.port, mqttProtocol: "v311")
            .replacingOccurrences(of: "  keepalive: 5\n", with: "  keepalive: 5\n  clean_session: \(clean)\n")
        #expect(config.contains("clean_session: \(clean)"))
        let observer = try await CapturingSubscriber(
            broker: broker,
            filters: ["motion/\(device)/status", "motion/\(device)/control/reply"],
            protocolVersion: .v311
        )
        let statusTopic = "motion/\(device)/status"
        let replyTopic = "motion/\(device)/control/reply"
        @Sendable func births(_ messages: [InboundMessage]) -> Int {
            messages.filter { $0.topic == statusTopic && payloadJSON($0)["state"] as? String == "online" }.count
        }
        @Sendable func replies(_ messages: [InboundMessage]) -> [String] {
            messages.filter { $0.topic == replyTopic }.compactMap { payloadJSON($0)["id"] as? String }
        }
        func send(_ id: String) throws {
            _ = try Array(#"{"id":"\#(id)","command":"ping"}"#.utf8).withUnsafeBytes {
                try observer.client.publish(topic: "motion/\(device)/control", payload: $0, qos: 1, retain: false)
            }
        }
        let first = try AgentProcess(config: config)
        try await observer.waitUntil(timeout: 20, "the first birth") { births($0) >= 1 }
        first.runner.terminate()
        #expect(await first.runner.waitForExit(timeout: 15) == 0)
        try send("sent-while-away")
        let second = try AgentProcess(config: config, directory: first.directory)
        defer { second.runner.kill() }
        try await observer.waitUntil(timeout: 20, "the second birth") { births($0) >= 2 }
        try send("sent-after")
        try await observer.waitUntil(timeout: 10, "the reply to the command sent after") {
            replies($0).contains("sent-after")
        }
        let answered = replies(observer.messages)
        #expect(answered.contains("sent-while-away") == !clean, "replies: \(answered); \(second.runner.standardError)")
        await observer.close()
    }

    @Test func changesPersistAcrossARestart() async throws {
        let broker = try await MosquittoBroker.started()
        let first = try AgentProcess(config: AgentProcess.config(device: "e2e-persist", port: broker.port))
        let status = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-persist/status"])
        try await status.waitFor(count: 1, timeout: 20)
        let (code, lines) = try await Self.ctl(
            broker,
            ["--device", "e2e-persist", "set-rate", "stream=magnetometer", "interval_s=0.2"]
        )
        #expect(code == 0, "\(lines)")
        first.runner.terminate()
        _ = await first.runner.waitForExit(timeout: 15)
        let second = try AgentProcess(
            config: try String(contentsOfFile: first.configPath, encoding: .utf8),
            arguments: ["run", "--config", first.configPath]
        )
        defer { second.runner.kill() }
        try await status.waitUntil(timeout: 20, "the second birth") { messages in
            messages.filter { payloadJSON($0)["state"] as? String == "online" }.count >= 2
        }
        let birth = try #require(
            status.messages.last { payloadJSON($0)["state"] as? String == "online" }.map(payloadJSON)
        )
        let magnetometer = (birth["streams"] as? [String: Any])?["magnetometer"] as? [String: Any]
        #expect(magnetometer?["requestedRateHz"] as? Double == 5, "set-rate survived the restart")
        await status.close()
    }

    @Test func sighupAndReloadConfigApplyAValidFileAndKeepTheOldOneOnAnInvalidFile() async throws {
        let broker = try await MosquittoBroker.started()
        let agent = try AgentProcess(config: AgentProcess.config(device: "e2e-reload", port: broker.port))
        defer { agent.runner.kill() }
        let status = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-reload/status"])
        try await status.waitFor(count: 1, timeout: 20)
        func accelerometerRate() -> Double? {
            let last = status.messages.last.map(payloadJSON)
            return ((last?["streams"] as? [String: Any])?["accelerometer"] as? [String: Any])?["requestedRateHz"]
                as? Double
        }
        #expect(accelerometerRate() == 50)

        // SIGHUP with a changed file: the new rate applies without a restart.
        let original = try String(contentsOfFile: agent.configPath, encoding: .utf8)
        try (original + "\nstreams:\n  accelerometer:\n    rate_hz: 10\n").write(
            toFile: agent.configPath,
            atomically: true,
            encoding: .utf8
        )
        agent.runner.signal(SIGHUP)
        try await status.waitUntil(timeout: 10, "the reloaded rate in status") { messages in
            let last = messages.last.map(payloadJSON)
            return ((last?["streams"] as? [String: Any])?["accelerometer"] as? [String: Any])?["requestedRateHz"]
                as? Double == 10
        }
        #expect(agent.runner.isRunning)

        // reload-config with an invalid file: 400 with the problem, nothing changes.
        try (original + "\nstreams:\n  accelerometer:\n    rate_hz: -3\n").write(
            toFile: agent.configPath,
            atomically: true,
            encoding: .utf8
        )
        let (code, lines) = try await Self.ctl(broker, ["--device", "e2e-reload", "reload-config"])
        #expect(code == 1)
        #expect(lines.joined().contains("\t400\t") && lines.joined().contains("rate_hz"), "\(lines)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(accelerometerRate() == 10)
        await status.close()
    }

    @Test func setBatchPacksSamplesIntoBinaryOrJSONMessages() async throws {
        let broker = try await MosquittoBroker.started()
        let agent = try AgentProcess(config: AgentProcess.config(device: "e2e-batch", port: broker.port))
        defer { agent.runner.kill() }
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-batch/accelerometer"])
        try await subscriber.waitFor(count: 5, timeout: 20)
        let (code, lines) = try await Self.ctl(
            broker,
            ["--device", "e2e-batch", "set-batch", "stream=accelerometer", "batch=20", "encoding=binary"]
        )
        #expect(code == 0 && lines.first?.contains("\"batch\":20") == true, "\(lines)")
        try await subscriber.waitUntil(timeout: 10, "two binary batches") { messages in
            messages.filter { $0.payload.starts(with: Array("MAB".utf8)) }.count >= 2
        }
        let binary = subscriber.messages.filter { $0.payload.starts(with: Array("MAB".utf8)) }
        let full = binary.dropLast()  // the last one may still be filling when the encoding switches
        for m in full {
            #expect(Int(m.payload[6]) | Int(m.payload[7]) << 8 == 20)
            #expect(m.payload.count == 16 + 20 * 28)
        }
        let (jsonCode, _) = try await Self.ctl(
            broker,
            ["--device", "e2e-batch", "set-batch", "stream=accelerometer", "batch=5", "encoding=json"]
        )
        #expect(jsonCode == 0)
        try await subscriber.waitUntil(timeout: 10, "a JSON batch of 5") { messages in
            messages.contains { (payloadJSON($0)["batch"] as? [Any])?.count == 5 }
        }
        // Sample seq runs on across the encodings: no sample was lost in the switches.
        var seqs: [Int] = []
        for m in subscriber.messages {
            if m.payload.starts(with: Array("MAB".utf8)) {
                let first = (0..<8).reduce(0) { $0 | Int(m.payload[8 + $1]) << (8 * $1) }
                let count = Int(m.payload[6]) | Int(m.payload[7]) << 8
                seqs += Array(first..<(first + count))
            } else if let batch = payloadJSON(m)["batch"] as? [[String: Any]] {
                seqs += batch.compactMap { $0["seq"] as? Int }
            } else if let seq = payloadJSON(m)["seq"] as? Int {
                seqs.append(seq)
            }
        }
        // From the first sample heard (the first few may go out before the subscription reaches the broker).
        let first = seqs.first ?? 1
        #expect(
            seqs == Array(first..<(first + seqs.count)),
            "continuous sample seq across single, binary and JSON batches"
        )
        await subscriber.close()
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
