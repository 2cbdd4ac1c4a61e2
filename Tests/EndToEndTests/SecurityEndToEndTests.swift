import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import Foundation
import MosquittoTransport
import MotionWire
import Synchronization
import TestSupport
import Testing

/// The shipped broker security on a real mosquitto: TLS with a throwaway CA, accounts from a password file and
/// Deploy/mosquitto's ACL and TLS settings, the real agent connecting with TLS and a password; the broker refuses
/// commands from accounts that are not the operator's; signed commands are accepted and tampered or replayed
/// ones refused.
@Suite(.timeLimit(.minutes(10)), .serialized) struct SecurityEndToEndTests {
    /// Deploy/mosquitto in this checkout.
    static let deployDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Deploy/mosquitto").path

    /// A throwaway CA and a server certificate for 127.0.0.1, made with openssl, plus the password and key files.
    struct Secrets {
        let directory: String
        var caFile: String { directory + "/ca.crt" }
        var serverCertificate: String { directory + "/server.crt" }
        var serverKey: String { directory + "/server.key" }
        static let passwords = [
            "sec-dev": "device-secret-1", "sec-other": "device-secret-2", "operator": "operator-secret",
            "watcher": "watcher-secret",
        ]
        /// The operator's signing key; the devices trust its public key (`trusted.keys`).
        static let operatorKey = try! OperatorSigningKey(id: "ops-e2e", privateKey: Array(repeating: 42, count: 32))
        var keyFile: String { directory + "/operator.key" }
        var trustedKeysFile: String { directory + "/trusted.keys" }

        init() async throws {
            directory = NSTemporaryDirectory() + "motion-security-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            // The CA (ca.key stays there, to sign client certificates) and a server certificate for 127.0.0.1,
            // which libmosquitto checks against the host it connected to.
            _ = try await TLSFiles.make(in: directory)
            for (user, password) in Self.passwords {
                try (password + "\n").write(toFile: directory + "/\(user).password", atomically: true, encoding: .utf8)
                // The agent refuses a password file others may read.
                chmod(directory + "/\(user).password", 0o600)
            }
            try Self.operatorKey.fileText.write(toFile: keyFile, atomically: true, encoding: .utf8)
            chmod(keyFile, 0o600)
            try (Self.operatorKey.trustLine + "\n").write(toFile: trustedKeysFile, atomically: true, encoding: .utf8)
        }

        static func openssl(_ arguments: [String], in directory: String) async throws {
            try await TLSFiles.openssl(arguments, in: directory)
        }
    }

    /// The shipped mosquitto.conf's TLS and ACL lines with the paths of this test; everything else (listener,
    /// password file, persistence, logging) is the fixture's.
    static func brokerLines(_ secrets: Secrets) throws -> [String] {
        let shipped = try String(contentsOfFile: deployDirectory + "/mosquitto.conf", encoding: .utf8)
        // The shipped ACL, and a second operator account as its README says to add one ("watcher": with
        // use_username_as_clientid each account holds one connection, and the tests watch while ctl runs).
        let acl = try String(contentsOfFile: deployDirectory + "/acl", encoding: .utf8)
        let operatorBlock = try #require(acl.range(of: "user operator\n")).lowerBound
        let aclPath = secrets.directory + "/acl"
        try (acl + "\n" + acl[operatorBlock...].replacingOccurrences(of: "user operator", with: "user watcher"))
            .write(toFile: aclPath, atomically: true, encoding: .utf8)
        let paths = [
            "certfile": secrets.serverCertificate, "keyfile": secrets.serverKey, "cafile": secrets.caFile,
            "acl_file": aclPath,
        ]
        var lines: [String] = []
        for line in shipped.split(separator: "\n") where !line.hasPrefix("#") {
            let words = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard let key = words.first else { continue }
            if let path = paths[key] {
                lines.append("\(key) \(path)")
            } else if ["tls_version", "require_certificate", "use_username_as_clientid", "max_packet_size"].contains(
                key
            ) {
                lines.append(String(line))
            }
        }
        #expect(shipped.contains("allow_anonymous false"), "the shipped configuration refuses anonymous clients")
        #expect(
            lines.count == 8,
            "the shipped configuration has certfile, keyfile, cafile, acl_file, tls_version, require_certificate, use_username_as_clientid and max_packet_size: \(lines)"
        )
        return lines
    }

    static func startBroker(_ secrets: Secrets) async throws -> MosquittoBroker {
        try await MosquittoBroker.started(
            options: MosquittoBroker.Options(
                allowAnonymous: false,
                users: Secrets.passwords,
                extraConfiguration: try brokerLines(secrets)
            )
        )
    }

    static func agentConfig(_ secrets: Secrets, device: String, port: Int, signed: Bool) -> String {
        AgentProcess.config(
            device: device,
            port: port,
            extra: """
                control:
                  max_age_s: 300
                \(signed ? "  trusted_keys_file: \(secrets.trustedKeysFile)" : "")
                """
        ).replacingOccurrences(
            of: "  reconnect_max_delay: 1\n",
            with: """
                  reconnect_max_delay: 1
                  username: \(device)
                  password_file: \(secrets.directory)/\(device).password
                  tls:
                    ca_file: \(secrets.caFile)

                """
        )
    }

    /// An MQTT client over TLS with an account that collects what it receives. (CapturingSubscriber's readiness
    /// probe publishes to a private topic, which the shipped ACL rightly refuses.)
    final class Client: Sendable {
        let client = MosquittoClient()
        private struct Seen {
            var messages: [InboundMessage] = []
            var failure: String?
            var connected = false
        }
        private final class Box: Sendable {
            let state = Mutex(Seen())
        }
        private let box = Box()
        private let acknowledgements = AcknowledgementRecorder()
        private let pump: Task<Void, Never>

        init(
            _ broker: MosquittoBroker,
            _ secrets: Secrets,
            user: String,
            password: String? = nil,
            tls: Bool = true
        ) async throws {
            let client = self.client
            let box = self.box
            client.setAcknowledgementHandler(acknowledgements)
            pump = Task {
                for await event in client.events {
                    box.state.withLock { seen in
                        switch event {
                        case .message(let m): seen.messages.append(m)
                        case .connected: seen.connected = true
                        case .connectFailed(_, let reason, _): seen.failure = reason
                        case .disconnected(let reason, _): seen.failure = seen.failure ?? reason
                        case .serverReference: break
                        }
                    }
                }
            }
            try client.connect(
                BrokerConnectOptions(
                    host: broker.host,
                    port: broker.port,
                    clientID: "sec-test-\(user)-\(UUID().uuidString.prefix(6))",
                    username: user,
                    password: password ?? Secrets.passwords[user],
                    tls: tls ? BrokerTLS(caFile: secrets.caFile) : nil
                )
            )
            try await SecurityEndToEndTests.until("\(user) connected or refused", timeout: 15) {
                box.state.withLock { $0.connected || $0.failure != nil }
            }
        }

        deinit { pump.cancel() }

        var isConnected: Bool { box.state.withLock { $0.connected && $0.failure == nil } }
        var messages: [InboundMessage] { box.state.withLock { $0.messages } }
        func messages(on topic: String) -> [InboundMessage] { messages.filter { $0.topic == topic } }

        @discardableResult
        func publish(_ topic: String, _ payload: [UInt8]) throws -> Int32 {
            try payload.withUnsafeBytes { try client.publish(topic: topic, payload: $0, qos: 1, retain: false) }
        }

        func waitDelivered(_ id: Int32) async throws {
            try await SecurityEndToEndTests.until("PUBACK of message \(id)", timeout: 10) {
                self.acknowledgements.contains(id)
            }
        }

        func close() async { await client.disconnect(flushTimeout: 1) }
    }

    struct Timeout: Error, CustomStringConvertible { var description: String }

    static func until(_ what: String, timeout: Double, _ condition: @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                throw Timeout(description: "timed out after \(timeout) s waiting for \(what)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    static func reply(_ client: Client, topic: String, id: String, timeout: Double = 10) async throws -> [String: Any] {
        try await until("the reply to \(id)", timeout: timeout) {
            client.messages(on: topic).contains { payloadJSON($0)["id"] as? String == id }
        }
        return payloadJSON(client.messages(on: topic).first { payloadJSON($0)["id"] as? String == id }!)
    }

    /// The streams section of the device's latest retained status.
    static func streams(_ client: Client, device: String) -> NSDictionary? {
        client.messages(on: "motion/\(device)/status").last.flatMap { payloadJSON($0)["streams"] as? NSDictionary }
    }

    static func accelerometerEnabled(_ client: Client, device: String) -> Bool? {
        guard let status = client.messages(on: "motion/\(device)/status").last.map(payloadJSON) else { return nil }
        return ((status["streams"] as? [String: Any])?["accelerometer"] as? [String: Any])?["enabled"] as? Bool
    }

    static func ctl(
        _ broker: MosquittoBroker,
        _ secrets: Secrets,
        user: String,
        _ arguments: [String]
    ) async throws -> (Int32?, [String]) {
        let runner = ProcessRunner(
            executable: AgentProcess.executable,
            arguments: [
                "ctl", "--port", "\(broker.port)", "--cafile", secrets.caFile, "--username", user,
                "--password-file", secrets.directory + "/\(user).password", "--timeout", "4",
            ] + arguments
        )
        try runner.start()
        let code = await runner.waitForExit(timeout: 20)
        return (code, runner.standardOutput.split(separator: "\n").map(String.init) + [runner.standardError])
    }

    @Test func theShippedACLOverTLSLetsOnlyTheOperatorCommand() async throws {
        let secrets = try await Secrets()
        let broker = try await Self.startBroker(secrets)
        let agent = try AgentProcess(
            config: Self.agentConfig(secrets, device: "sec-dev", port: broker.port, signed: false)
        )
        defer { agent.runner.kill() }

        // Over TLS with its password the agent connects, and its streams reach the operator.
        let operatorClient = try await Client(broker, secrets, user: "watcher")
        #expect(operatorClient.isConnected)
        try operatorClient.client.subscribe(["motion/sec-dev/#"], qos: 1)
        try await Self.until("the agent's status and accelerometer stream", timeout: 20) {
            !operatorClient.messages(on: "motion/sec-dev/status").isEmpty
                && operatorClient.messages(on: "motion/sec-dev/accelerometer").count >= 10
        }
        #expect(Self.accelerometerEnabled(operatorClient, device: "sec-dev") == true)

        // Without TLS, or with a wrong password, nobody gets in.
        let plain = try await Client(broker, secrets, user: "operator", tls: false)
        #expect(!plain.isConnected)
        let wrong = try await Client(broker, secrets, user: "operator", password: "guess")
        #expect(!wrong.isConnected)
        await plain.close()
        await wrong.close()

        // Another device's account commands this device and the fleet: the broker drops both (ACL), so the agent
        // neither answers nor changes. The broker's PUBACK proves it handled them (mosquitto queues a message to
        // its subscribers before acknowledging it); the operator's ping after it, answered on the same
        // connection, proves the agent read everything queued before.
        let intruder = try await Client(broker, secrets, user: "sec-other")
        #expect(intruder.isConnected)
        let streamsBefore = try #require(Self.streams(operatorClient, device: "sec-dev"))
        for topic in ["motion/sec-dev/control", "motion/fleet/control"] {
            let id = try intruder.publish(
                topic,
                Array(#"{"id":"intrude-\#(topic.count)","command":"stop","stream":"accelerometer"}"#.utf8)
            )
            try await intruder.waitDelivered(id)
        }
        let (code, lines) = try await Self.ctl(broker, secrets, user: "operator", ["--device", "sec-dev", "ping"])
        #expect(
            code == 0 && lines.first?.hasPrefix("sec-dev\tok\t200") == true,
            "the operator's command is answered: \(lines)"
        )
        #expect(
            !operatorClient.messages(on: "motion/sec-dev/control/reply").contains {
                (payloadJSON($0)["id"] as? String)?.hasPrefix("intrude") == true
            }
        )
        #expect(!agent.runner.standardError.contains("intrude"), "the agent never saw the intruder's commands")
        #expect(Self.streams(operatorClient, device: "sec-dev") == streamsBefore, "the status is unchanged")
        try await Self.until("accelerometer samples still flowing", timeout: 10) {
            operatorClient.messages(on: "motion/sec-dev/accelerometer").count >= 20
        }

        // Nor can it read this device's streams or control topic, though it reads its own control topic (an
        // operator's message arriving there proves its subscriptions are in effect; a device may not write it).
        try intruder.client.subscribe(["motion/sec-dev/#", "motion/sec-other/control"], qos: 1)
        // The subscription and the operator's publish travel on two connections: the probe is sent again until
        // one arrives after the subscription took effect (a first one can overtake it).
        let probeDeadline = ContinuousClock.now + .seconds(10)
        while intruder.messages(on: "motion/sec-other/control").isEmpty {
            guard ContinuousClock.now < probeDeadline else {
                throw Timeout(description: "timed out after 10 s waiting for the intruder's own control topic")
            }
            try operatorClient.publish("motion/sec-other/control", Array("probe".utf8))
            try await Task.sleep(for: .milliseconds(250))
        }
        let seen = operatorClient.messages(on: "motion/sec-dev/accelerometer").count
        try await Self.until("more accelerometer samples", timeout: 10) {
            operatorClient.messages(on: "motion/sec-dev/accelerometer").count >= seen + 10
        }
        #expect(
            !intruder.messages.contains { $0.topic.hasPrefix("motion/sec-dev/") },
            "another device's account read this device's topics"
        )

        // A device cannot impersonate the operator through the ctl either.
        let (intruderCode, _) = try await Self.ctl(
            broker,
            secrets,
            user: "sec-other",
            ["--device", "sec-dev", "stop", "stream=accelerometer"]
        )
        #expect(intruderCode == 2, "no reply: the broker dropped the command")
        #expect(Self.accelerometerEnabled(operatorClient, device: "sec-dev") == true)

        // The operator's command is applied.
        let (stopCode, stopLines) = try await Self.ctl(
            broker,
            secrets,
            user: "operator",
            ["--device", "sec-dev", "stop", "stream=accelerometer"]
        )
        #expect(stopCode == 0, "\(stopLines)")
        try await Self.until("the status showing the stop", timeout: 10) {
            Self.accelerometerEnabled(operatorClient, device: "sec-dev") == false
        }
        await intruder.close()
        await operatorClient.close()
    }

    @Test func signedCommandsAreAcceptedAndTamperedOrReplayedOnesRefused() async throws {
        let secrets = try await Secrets()
        let broker = try await Self.startBroker(secrets)
        let agent = try AgentProcess(
            config: Self.agentConfig(secrets, device: "sec-dev", port: broker.port, signed: true)
        )
        defer { agent.runner.kill() }
        let operatorClient = try await Client(broker, secrets, user: "watcher")
        try operatorClient.client.subscribe(["motion/sec-dev/status", "motion/sec-dev/control/reply"], qos: 1)
        try await Self.until("the agent's status", timeout: 20) {
            Self.accelerometerEnabled(operatorClient, device: "sec-dev") == true
        }
        let replies = "motion/sec-dev/control/reply"

        // The ctl signs with --signing-key: accepted. Without it: 401.
        let (code, lines) = try await Self.ctl(
            broker,
            secrets,
            user: "operator",
            ["--signing-key", secrets.keyFile, "--device", "sec-dev", "stop", "stream=accelerometer"]
        )
        #expect(code == 0 && lines.first?.hasPrefix("sec-dev\tok\t200") == true, "\(lines)")
        try await Self.until("the signed stop in the status", timeout: 10) {
            Self.accelerometerEnabled(operatorClient, device: "sec-dev") == false
        }
        let (unsignedCode, unsignedLines) = try await Self.ctl(
            broker,
            secrets,
            user: "operator",
            ["--device", "sec-dev", "start", "stream=accelerometer"]
        )
        #expect(unsignedCode == 1 && unsignedLines.first?.contains("\t401\t") == true, "\(unsignedLines)")

        // Raw envelopes, signed here with the same key.
        var counter = Int(Date().timeIntervalSince1970 * 1e6) + 1_000_000
        func envelope(_ id: String, _ command: String, reusing: Int? = nil) -> [UInt8] {
            let value: Int
            if let reusing {
                value = reusing
            } else {
                counter += 1
                value = counter
            }
            return SignedEnvelope.seal(
                [
                    ("target", .string("motion/sec-dev/control")), ("counter", .number(String(value))),
                    ("id", .string(id)), ("command", .string(command)), ("stream", .string("accelerometer")),
                ],
                with: Secrets.operatorKey
            )
        }
        // Tampered: a signed "start" turned into a "ping" with the signature kept.
        let start = envelope("tamper-1", "start")
        let outer = try #require(try JSONSerialization.jsonObject(with: Data(start)) as? [String: String])
        let command = String(decoding: Data(base64Encoded: outer["signed"]!)!, as: UTF8.self)
        let forged = command.replacingOccurrences(of: "\"start\"", with: "\"ping\"")
        #expect(forged != command)
        let tampered = try JSONSerialization.data(withJSONObject: [
            "key": outer["key"]!, "signed": Data(forged.utf8).base64EncodedString(), "signature": outer["signature"]!,
        ])
        try operatorClient.publish("motion/sec-dev/control", Array(tampered))
        let refused = try await Self.reply(operatorClient, topic: replies, id: "tamper-1")
        #expect(refused["code"] as? Int == 401 && refused["ok"] as? Bool == false, "\(refused)")
        #expect(
            await agent.runner.waitForOutput(containing: "signature does not match", timeout: 5),
            "the refusal is logged"
        )

        // The genuine start is applied; then a captured stop, replayed after a later start, changes nothing.
        try operatorClient.publish("motion/sec-dev/control", start)
        @Sendable func answers(_ id: String) -> [[String: Any]] {
            operatorClient.messages(on: replies).map(payloadJSON).filter { $0["id"] as? String == id }
        }
        try await Self.until("the genuine command's reply", timeout: 10) { answers("tamper-1").count == 2 }
        try await Self.until("the start in the status", timeout: 10) {
            Self.accelerometerEnabled(operatorClient, device: "sec-dev") == true
        }
        let genuine = answers("tamper-1")
        #expect(genuine.map { $0["code"] as? Int } == [401, 200], "\(genuine)")
        let stop = envelope("replay-stop", "stop")
        let stopCounter = counter
        try operatorClient.publish("motion/sec-dev/control", stop)
        #expect(try await Self.reply(operatorClient, topic: replies, id: "replay-stop")["code"] as? Int == 200)
        let restart = envelope("replay-start", "start")
        try operatorClient.publish("motion/sec-dev/control", restart)
        #expect(try await Self.reply(operatorClient, topic: replies, id: "replay-start")["code"] as? Int == 200)
        try await Self.until("the restart in the status", timeout: 10) {
            Self.accelerometerEnabled(operatorClient, device: "sec-dev") == true
        }
        try operatorClient.publish("motion/sec-dev/control", stop)  // the captured stop, byte for byte
        #expect(
            await agent.runner.waitForOutput(containing: "replay-stop arrived again with the same counter", timeout: 10)
        )
        // The same counter under a new id: 401.
        try operatorClient.publish("motion/sec-dev/control", envelope("replay-new-id", "stop", reusing: stopCounter))
        let reused = try await Self.reply(operatorClient, topic: replies, id: "replay-new-id")
        #expect(
            reused["code"] as? Int == 401 && (reused["message"] as? String)?.contains("was used already") == true,
            "\(reused)"
        )
        #expect(answers("replay-stop").count == 1, "the replay was not answered")
        #expect(
            Self.accelerometerEnabled(operatorClient, device: "sec-dev") == true,
            "the replayed stop changed nothing"
        )
        await operatorClient.close()
    }

    @Test func clientCertificatesAreRequiredWhenTheBrokerAsksForThem() async throws {
        let secrets = try await Secrets()
        // A client certificate for the device, signed by the test CA.
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await Secrets.openssl(
            ["req"] + ec + ["-keyout", "sec-dev.key", "-out", "sec-dev.csr", "-subj", "/CN=sec-dev"],
            in: secrets.directory
        )
        try await Secrets.openssl(
            [
                "x509", "-req", "-in", "sec-dev.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                "sec-dev.crt", "-days", "2",
            ],
            in: secrets.directory
        )
        // The agent refuses a private key others may read.
        chmod(secrets.directory + "/sec-dev.key", 0o600)
        let lines = try Self.brokerLines(secrets).map {
            $0 == "require_certificate false" ? "require_certificate true" : $0
        }
        #expect(lines.contains("require_certificate true"))
        let broker = try await MosquittoBroker.started(
            options: MosquittoBroker.Options(allowAnonymous: false, users: Secrets.passwords, extraConfiguration: lines)
        )

        // Without a client certificate the broker ends the handshake; the agent says to check mqtt.tls.* and keeps
        // trying, and never gets connected.
        let refused = try AgentProcess(
            config: Self.agentConfig(secrets, device: "sec-dev", port: broker.port, signed: false)
        )
        defer { refused.runner.kill() }
        #expect(
            await refused.runner.waitForOutput(containing: "mqtt.tls", timeout: 20),
            "\(refused.runner.standardError.suffix(1500))"
        )
        #expect(!refused.runner.standardError.contains("connected to the broker"))
        #expect(refused.runner.isRunning)
        refused.runner.kill()

        // With its certificate and key (mqtt.tls.cert_file / key_file) it connects and streams.
        let config = Self.agentConfig(secrets, device: "sec-dev", port: broker.port, signed: false)
            .replacingOccurrences(
                of: "    ca_file: \(secrets.caFile)\n",
                with:
                    "    ca_file: \(secrets.caFile)\n    cert_file: \(secrets.directory)/sec-dev.crt\n    key_file: \(secrets.directory)/sec-dev.key\n"
            )
        #expect(config.contains("cert_file"))
        let agent = try AgentProcess(config: config)
        defer { agent.runner.kill() }
        let operatorClient = try await Client(broker, secrets, user: "watcher")
        #expect(operatorClient.isConnected == false, "the operator has no client certificate either")
        #expect(
            await agent.runner.waitForOutput(containing: "connected to the broker", timeout: 20),
            "\(agent.runner.standardError.suffix(1500))"
        )
    }
}
