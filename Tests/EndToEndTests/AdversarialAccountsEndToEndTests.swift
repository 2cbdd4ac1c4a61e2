import AgentConfig
import AgentControl
import AgentPorts
import Foundation
import MosquittoTransport
import MotionWire
import Synchronization
import TestSupport
import Testing

/// Issue 27's attacks by a device account — what a compromised device can do with its own credentials — on the
/// shipped broker configurations: the central one (Deploy/mosquitto) and an edge broker bridged to it
/// (Deploy/mosquitto-bridge, edge.conf and edge.acl). The broker must drop what the account may not write (the
/// PUBACK says 135, not authorized; the agents and an operator's subscriber never see it), an account cannot take
/// another device's client id, and what a device writes on its own topics — status, streams, replies — reaches the
/// operators' terminals only as text, never as escape sequences, and never in another device's name.
@Suite(.timeLimit(.minutes(10)), .serialized) struct AdversarialAccountsEndToEndTests {
    typealias Fleet = AdversarialFleet

    /// mosquitto's reason codes in a PUBACK.
    static let notAuthorized = 135
    static let accepted: Set<Int> = [0, 16]

    @Test func theShippedACLKeepsADeviceAccountInItsOwnTopicsAndOutOfTheOperatorsTerminal() async throws {
        let fleet = try await Fleet(
            devices: ["adv-a", "adv-u", "adv-mallory", "adv-evil"],
            groups: ["adv-a": ["lab"], "adv-u": ["lab"]]
        )
        let observer = try await fleet.observer()
        // adv-u does not sign: it applies whatever reaches it, so only the broker stands between it and a device
        // account. adv-a signs.
        let agentU = try fleet.startAgent("adv-u", signed: false, groups: ["lab"])
        let agentA = try fleet.startAgent("adv-a", signed: true, groups: ["lab"])
        defer {
            agentU.runner.kill()
            agentA.runner.kill()
        }
        for device in ["adv-u", "adv-a"] {
            try await observer.waitFor(count: 5, on: "motion/\(device)/accelerometer", timeout: 30)
        }
        let statusU = Fleet.status(observer, "adv-u")
        try await Self.aDeviceAccountWritesOnlyItsOwnTopics(fleet, observer, agents: [agentU, agentA])
        try await Self.aDeviceAccountCannotTakeAnotherDevicesClientID(fleet, observer, agentU)
        try await Self.deviceTextNeverReachesTheOperatorsTerminalRaw(fleet, observer)

        // What the broker dropped would have been applied: the same command from the operator account is.
        let applied = try await fleet.ctl(
            ["--device", "adv-u", "set-rate", "stream=gyroscope", "rate_hz=5"],
            signed: false
        )
        #expect(applied.code == 0 && applied.output.hasPrefix("adv-u\tok\t200"), "\(applied.output)")
        #expect(Fleet.settings(statusU)["streams.gyroscope.rate_hz"]?.hasPrefix("5 ") == false)
        try await Fleet.until("adv-u's status with the operator's rate", timeout: 20) {
            Fleet.settings(Fleet.status(observer, "adv-u"))["streams.gyroscope.rate_hz"]?.hasPrefix("5 (command")
                == true
        }

        for (device, agent) in [("adv-u", agentU), ("adv-a", agentA)] {
            let problems = Fleet.seqProblems(observer.messages(on: "motion/\(device)/accelerometer"))
            #expect(problems.isEmpty, "\(device)'s stream: \(problems.prefix(10))")
            #expect(!agent.runner.standardError.contains("mallory"), "\(device) saw a message of adv-mallory")
            #expect(agent.runner.isRunning)
        }
        await observer.close()
    }

    // MARK: - the ACL

    /// adv-mallory, a device account, publishes commands and documents for another device, for itself, for the
    /// group and the fleet, another device's stream, status and Home Assistant entity, and replies in another
    /// device's name: the broker refuses each (135), nobody receives it, the devices change nothing. Its own
    /// status it may write (the control case: the account works).
    static func aDeviceAccountWritesOnlyItsOwnTopics(
        _ fleet: Fleet,
        _ observer: CapturingSubscriber,
        agents: [AgentProcess]
    ) async throws {
        let stop = { (id: String) in #"{"id":"\#(id)","command":"set-rate","stream":"gyroscope","rate_hz":5}"# }
        let document = #"{"version": 77, "streams": {"gyroscope": {"rate_hz": 5}}}"#
        let settings = ["adv-u", "adv-a"].map { Fleet.settings(Fleet.status(observer, $0)) }
        let attempts: [(topic: String, payload: String, retain: Bool)] = [
            ("motion/adv-u/control", stop("mallory-other-control"), false),
            ("motion/adv-u/desired", document, true),
            ("motion/adv-mallory/control", stop("mallory-own-control"), false),
            ("motion/adv-mallory/desired", document, true),
            ("motion/fleet/control", stop("mallory-fleet-control"), false),
            ("motion/fleet/desired", document, true),
            ("motion/group/lab/control", stop("mallory-group-control"), false),
            ("motion/group/lab/desired", document, true),
            (
                "motion/adv-u/accelerometer", #"{"seq":1,"timestamp":1,"time":1,"x":0,"y":0,"z":-1,"by":"mallory"}"#,
                false
            ),
            ("motion/adv-u/status", #"{"state":"offline","by":"mallory"}"#, true),
            ("motion-ctl/motion-ctl-0000/reply/adv-u", #"{"id":"x","ok":true,"code":200,"by":"mallory"}"#, false),
            ("motion/adv-u/control/reply", #"{"id":"x","ok":true,"code":200,"by":"mallory"}"#, false),
            ("homeassistant/sensor/adv-u/x/config", #"{"by":"mallory"}"#, true),
        ]
        for attempt in attempts {
            let code = try await fleet.publishAs("adv-mallory", attempt.topic, attempt.payload, retain: attempt.retain)
            #expect(
                code == notAuthorized,
                "adv-mallory's publish on \(attempt.topic) was answered with reason code \(code.map(String.init) ?? "none"), not 135"
            )
        }
        let own = try await fleet.publishAs("adv-mallory", "motion/adv-mallory/status", #"{"state":"online"}"#)
        #expect(
            own.map { accepted.contains($0) } == true,
            "adv-mallory may write its own status: \(String(describing: own))"
        )
        try await Fleet.until("adv-mallory's own status", timeout: 10) {
            !observer.messages(on: "motion/adv-mallory/status").isEmpty
        }
        // The own status came through after every refused publish: the observer would have had them by now.
        try await fleet.expectAnswers("adv-u", signed: false, "after adv-mallory's attempts")
        try await fleet.expectAnswers("adv-a", "after adv-mallory's attempts")
        let delivered = observer.messages.filter {
            String(decoding: $0.payload, as: UTF8.self).contains("mallory") && $0.topic != "motion/adv-mallory/status"
        }
        #expect(delivered.isEmpty, "the broker delivered: \(delivered.map(\.topic))")
        #expect(["adv-u", "adv-a"].map { Fleet.settings(Fleet.status(observer, $0)) } == settings)
        for agent in agents {
            #expect(!agent.runner.standardError.contains("version 77") && !agent.runner.standardError.contains("v77"))
        }
    }

    /// adv-mallory connects with adv-u's client id and a will that says adv-u is offline, then vanishes: the
    /// broker gives the connection adv-mallory's own id (use_username_as_clientid), adv-u stays connected, and no
    /// "offline" appears for it.
    static func aDeviceAccountCannotTakeAnotherDevicesClientID(
        _ fleet: Fleet,
        _ observer: CapturingSubscriber,
        _ agentU: AgentProcess
    ) async throws {
        let connections = agentU.runner.standardError.components(separatedBy: "connected to the broker").count
        let statuses = observer.messages(on: "motion/adv-u/status").count
        let takeover = ProcessRunner(
            executable: "/usr/bin/mosquitto_sub",
            arguments: [
                "-h", fleet.broker.host, "-p", "\(fleet.broker.port)", "-u", "adv-mallory", "-P",
                fleet.passwords["adv-mallory"]!, "-V", "mqttv5", "-i", "motion-agent-adv-u", "-t",
                "motion/adv-mallory/control", "--will-topic", "motion/adv-u/status", "--will-payload",
                #"{"state":"offline","by":"mallory"}"#, "--will-retain", "--will-qos", "1",
            ]
        )
        // The broker's log from here on (adv-mallory's earlier publishes are in it already).
        let logged = fleet.broker.log.count
        let since = { String(fleet.broker.log.dropFirst(logged)) }
        try takeover.start()
        try await Fleet.until("the takeover connection in the broker's log", timeout: 20) {
            since().contains("New client connected from")
        }
        #expect(
            since().contains("as adv-mallory (p5") && !since().contains("as motion-agent-adv-u"),
            "the broker did not give the connection adv-mallory's own id:\n\(since().suffix(1500))"
        )
        // Killed: no DISCONNECT, so the broker sends the will (if the ACL let it).
        takeover.kill()
        _ = await takeover.waitForExit(timeout: 10)
        try await Fleet.until("the broker to see adv-mallory go", timeout: 20) {
            ["Client adv-mallory closed its connection", "Client adv-mallory disconnected"].contains {
                since().contains($0)
            }
        }
        try await fleet.expectAnswers("adv-u", signed: false, "after the takeover attempt")
        #expect(
            !observer.messages(on: "motion/adv-u/status").dropFirst(statuses).contains {
                payloadJSON($0)["state"] as? String == "offline"
            },
            "an offline status appeared for adv-u"
        )
        #expect(
            agentU.runner.standardError.components(separatedBy: "connected to the broker").count == connections,
            "adv-u was disconnected and connected again: \(agentU.runner.standardError.suffix(1500))"
        )
    }

    // MARK: - the operators' terminal

    /// A device publishes, on the topics it may write, text full of escape sequences, a status that names
    /// another device and replies in another device's name. `ctl` (MQTT 5 and 3.1.1), `fleet status` (table and
    /// JSON), `fleet set --wait`, `sub`, `watch --once` and the live `watch` print no control character but
    /// newline and tab (the live view's own cursor movements aside), key every row by the topic it came from and
    /// flag the impostor.
    static func deviceTextNeverReachesTheOperatorsTerminalRaw(
        _ fleet: Fleet,
        _ observer: CapturingSubscriber
    ) async throws {
        let hostile = "\u{1B}]0;owned\u{07}\u{1B}[2J\u{1B}[31mred\u{9B}1m\r"
        let evil = try await fleet.client("adv-evil")
        defer { Task { await evil.disconnect(flushTimeout: 1) } }
        // A status copied from adv-a's, naming adv-a, with hostile text wherever the tools print device text.
        var status = Fleet.status(observer, "adv-a")
        status["device"] = "adv-a"
        status["agentVersion"] = "9.9" + hostile
        var configuration = status["configuration"] as? [String: Any] ?? [:]
        configuration["refused"] = ["layer": "group lab" + hostile, "version": 9, "reason": hostile, "time": 1]
        configuration["ignored"] = ["layer": "device", "version": 1, "reason": hostile, "time": 1]
        // …and a fleet version next to 2⁵³, which an operator's `fleet set --replace` would start above.
        configuration["desired"] = ["group lab" + hostile: 3, "fleet": 9_007_199_254_740_991]
        var settings = configuration["settings"] as? [String: Any] ?? [:]
        settings["streams.gyroscope.rate_hz"] = ["value": hostile, "source": "command " + hostile, "note": hostile]
        configuration["settings"] = settings
        status["configuration"] = configuration
        let statusBytes = try JSONSerialization.data(withJSONObject: status)
        func publish(_ topic: String, _ bytes: [UInt8], retain: Bool = true) throws {
            _ = try bytes.withUnsafeBytes { try evil.publish(topic: topic, payload: $0, qos: 1, retain: retain) }
        }
        try publish("motion/adv-evil/status", Array(statusBytes))
        try publish("motion/adv-evil/accelerometer", Array(("not JSON " + hostile).utf8))
        try publish(
            "motion/adv-evil/gyroscope",
            Array(#"{"seq":1,"timestamp":1,"time":1,"x":"\u001b[2J","y":0,"z":0}"#.utf8)
        )
        try publish("motion/adv-evil/metrics", Array(#"{"\u001b]0;owned\u0007":1,"seq":"\u001b[2J"}"#.utf8))
        try await Fleet.until("the hostile status at the observer", timeout: 10) {
            !observer.messages(on: "motion/adv-evil/status").isEmpty
                && !observer.messages(on: "motion/adv-evil/metrics").isEmpty
        }

        // Answers every fleet command, in its own name and (refused by the broker) in adv-a's.
        let heard = Atomic<Bool>(false)
        let answering = Task {
            for await event in evil.events {
                guard case .message(let m) = event else { continue }
                heard.store(true, ordering: .relaxed)
                guard m.topic == "motion/fleet/control" else { continue }
                let id = Fleet.signedObject(m.payload)?.first { $0.key == "id" }?.value.string ?? "?"
                let reply = ControlReply(
                    code: 200,
                    device: "adv-a",
                    id: id,
                    message: "pong" + hostile,
                    ok: true,
                    result: nil
                ).encoded()
                if let responseTopic = m.responseTopic {
                    for topic in [responseTopic + "/adv-evil", responseTopic + "/adv-a"] {
                        try? evil.publishResponse(topic: topic, payload: reply, correlationData: m.correlationData)
                    }
                } else {
                    for device in ["adv-evil", "adv-a"] {
                        _ = try? reply.withUnsafeBytes {
                            try evil.publish(
                                topic: "motion/\(device)/control/reply",
                                payload: $0,
                                qos: 1,
                                retain: false
                            )
                        }
                    }
                }
            }
        }
        defer { answering.cancel() }
        // Both subscriptions (one SUBSCRIBE) are in effect once an operator's message on its own control topic
        // reaches the device.
        try evil.subscribe(["motion/fleet/control", "motion/adv-evil/control"], qos: 1)
        for _ in 0..<50 where !heard.load(ordering: .relaxed) {
            _ = try Array("probe".utf8).withUnsafeBytes {
                try observer.client.publish(topic: "motion/adv-evil/control", payload: $0, qos: 1, retain: false)
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        let subscribed = heard.load(ordering: .relaxed)
        #expect(subscribed, "adv-evil's subscriptions never took effect")

        func clean(_ what: String, _ output: AdversarialFleet.Output) {
            let found = Fleet.controlCharacters(in: output.output + output.errors)
            #expect(found.isEmpty, "\(what) printed control characters \(Set(found).sorted()):\n\(output.output)")
        }
        for version in ["v5", "v311"] {
            let ctl = try await fleet.ctl(["--protocol", version, "--fleet", "ping"])
            clean("ctl --fleet (\(version))", ctl)
            let rows = ctl.lines
            #expect(ctl.code == 1, "an impostor's reply makes the ctl fail: \(ctl.output)\(ctl.errors)")
            #expect(rows.filter { $0.hasPrefix("adv-a\t") }.count == 1, "adv-a answered once, itself: \(rows)")
            #expect(
                rows.contains {
                    $0.hasPrefix("adv-evil\tok\t200\tpong\\u{1B}]0;owned") && $0.contains("names the device adv-a")
                },
                "adv-evil's reply, flagged: \(rows)"
            )
        }

        let table = try await fleet.cli(["fleet", "status"], [])
        clean("fleet status", table)
        #expect(table.code == 1)
        let lines = table.lines
        #expect(lines.filter { $0.hasPrefix("adv-a\t") }.count == 1, "one row for adv-a: \(lines)\(table.errors)")
        #expect(
            lines.contains { $0.contains("its status names the device adv-a: not believed (the topic says adv-evil)") },
            "\(table.output)"
        )
        let json = try await fleet.cli(["fleet", "status"], ["--json"])
        clean("fleet status --json", json)
        let rows = try #require(
            try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]],
            "\(json.output)"
        )
        #expect(rows.compactMap { $0["device"] as? String }.sorted() == ["adv-a", "adv-evil", "adv-u"])
        #expect(rows.first { $0["device"] as? String == "adv-evil" }?["impostor"] as? String == "adv-a")

        let set = try await fleet.cli(
            ["fleet", "set"],
            ["--signing-key", fleet.keyFile, "--device", "adv-evil", "--wait", "2", "streams.gyroscope.rate_hz=5"]
        )
        clean("fleet set --wait", set)
        #expect(set.code == 1 && set.output.contains("not yet: adv-evil (refused:"), "\(set.output)\(set.errors)")

        // The fleet version it reports would leave the fleet's layer no room for another edit: not believed.
        let fleetDocuments = observer.messages(on: "motion/fleet/desired").count
        let frozen = try await fleet.cli(
            ["fleet", "set"],
            ["--signing-key", fleet.keyFile, "--fleet", "--replace", "--wait", "0", "streams.gyroscope.rate_hz=6"]
        )
        clean("fleet set --replace", frozen)
        #expect(
            frozen.code != 0 && frozen.errors.contains("adv-evil reports fleet v9007199254740991"),
            "fleet set --replace built on a device's claim: \(frozen.output)\(frozen.errors)"
        )
        let plainSet = try await fleet.cli(
            ["fleet", "set"],
            ["--signing-key", fleet.keyFile, "--fleet", "--wait", "0", "streams.gyroscope.rate_hz=6"]
        )
        #expect(
            plainSet.code != 0 && plainSet.errors.contains("adv-evil runs fleet v9007199254740991"),
            "\(plainSet.errors)"
        )
        try await fleet.expectAnswers("adv-a", "after the fleet edits")
        #expect(observer.messages(on: "motion/fleet/desired").count == fleetDocuments, "a fleet document was published")

        let sub = try await fleet.cli(["sub"], ["--count", "4", "adv-evil"])
        clean("sub", sub)
        #expect(sub.code == 0 && sub.lines.count >= 4, "\(sub.output)\(sub.errors)")
        let once = try await fleet.cli(["watch"], ["--once", "--seconds", "1", "adv-evil"])
        clean("watch --once", once)
        #expect(once.output.contains("agent 9.9\\u{1B}]0;owned"), "\(once.output)")

        // The live view draws with its own escapes (home, erase, alternate screen, cursor); none other may appear.
        let live = ProcessRunner(
            executable: AgentProcess.executable,
            arguments: [
                "watch", "--port", "\(fleet.broker.port)", "--username", "operator", "--password-file",
                fleet.passwordFile("operator"), "adv-evil",
            ]
        )
        try live.start()
        let drawn = await live.waitForOutput(containing: "]0;owned", timeout: 20)
        live.kill()
        _ = await live.waitForExit(timeout: 10)
        #expect(drawn, "the live view never drew the status: \(live.standardOutput.suffix(500))\(live.standardError)")
        var screen = live.standardOutput
        for own in ["\u{1B}[?1049h", "\u{1B}[?25l", "\u{1B}[H", "\u{1B}[K", "\u{1B}[J", "\u{1B}[?25h", "\u{1B}[?1049l"]
        {
            screen = screen.replacingOccurrences(of: own, with: "")
        }
        let found = Fleet.controlCharacters(in: screen)
        #expect(found.isEmpty, "the live watch printed control characters \(Set(found).sorted())")
    }

    // MARK: - the bridge

    /// The shipped edge.conf whole, for a broker on loopback: its listener and password file are the fixture's
    /// (checked to be in the file), its ACL the shipped edge.acl copied to `aclPath`, its persistence in the
    /// fixture's directory, and the bridge section with the central address, password and CA substituted (via
    /// DeployTests.bridgeSection, which fails when a line to substitute is missing).
    static func edgeLines(aclPath: String, centralPort: Int, password: String, caFile: String) throws -> [String] {
        let shipped = try String(contentsOfFile: Fleet.deploy + "/mosquitto-bridge/edge.conf", encoding: .utf8)
        let lines = shipped.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
        guard let connection = lines.firstIndex(where: { $0.hasPrefix("connection ") }) else {
            throw Fleet.Failure(description: "edge.conf has no bridge")
        }
        var local: [String] = []
        var seen: Set<String> = []
        for line in lines[..<connection] {
            let key = String(line.split(separator: " ").first ?? "")
            seen.insert(key)
            switch key {
            case "listener", "password_file", "persistence", "persistence_location":
                continue  // the fixture's own
            case "allow_anonymous":
                #expect(line == "allow_anonymous false", "edge.conf: \(line)")
            case "acl_file":
                local.append("acl_file \(aclPath)")
            default:
                local.append(line)
            }
        }
        for key in ["listener", "allow_anonymous", "password_file", "acl_file", "use_username_as_clientid"] {
            #expect(seen.contains(key), "the shipped edge.conf lost its \(key) line")
        }
        #expect(local.contains("use_username_as_clientid true"))
        return local
            + (try DeployTests.bridgeSection(centralPort: centralPort, password: password, caFile: caFile))
            .filter { !$0.hasPrefix("#") }
    }

    /// An edge broker as shipped (edge.conf with edge.acl) bridged to a central broker with the shipped ACL: a
    /// site device's account publishes a fleet desired document, another site device's control and desired
    /// topics, the group's, and takes a device's client id: the edge broker refuses each, nothing reaches the
    /// central broker, no device changes; what operators publish centrally still reaches the devices.
    @Test func theShippedEdgeBrokerKeepsASiteDeviceAccountFromSteeringItsNeighboursAndTheFleet() async throws {
        let pki = NSTemporaryDirectory() + "motion-adversarial-pki-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: pki, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: pki) }
        let tls = try await TLSFiles.make(in: pki)
        // Central: the shipped ACL with the bridge's user block as Deploy/mosquitto-bridge/README.md gives it.
        let outTopics = try String(contentsOfFile: Fleet.deploy + "/mosquitto-bridge/edge.conf", encoding: .utf8)
            .split(separator: "\n").filter { $0.hasPrefix("topic ") && $0.hasSuffix(" out 1") }
            .map { "topic write " + $0.dropFirst("topic ".count).dropLast(" out 1".count) }
        #expect(outTopics.count >= 10, "edge.conf's out topics: \(outTopics)")
        let bridgeBlock =
            "user edge-site-1\n" + outTopics.joined(separator: "\n")
            + "\ntopic read motion/+/control\ntopic read motion/+/desired\ntopic read motion/group/+/control\ntopic read motion/group/+/desired\n"
        let tlsPort = FreePort.find()
        let central = try await Fleet(
            devices: [],
            extraAccounts: ["edge-site-1": "bridge-secret"],
            extraACL: bridgeBlock,
            extraConfiguration: [
                "listener \(tlsPort) 127.0.0.1", "certfile \(tls.serverCertificate)", "keyfile \(tls.serverKey)",
            ]
        )
        let observer = try await central.observer()

        // Edge: accounts for its devices only, edge.acl as shipped.
        let devices = ["adv-e1", "adv-e2", "adv-mallory"]
        let edgeACL = pki + "/edge.acl"
        try FileManager.default.copyItem(atPath: Fleet.deploy + "/mosquitto-bridge/edge.acl", toPath: edgeACL)
        var passwords: [String: String] = [:]
        for device in devices {
            passwords[device] = "\(device)-secret"
            try "\(device)-secret\n".write(toFile: pki + "/\(device).password", atomically: true, encoding: .utf8)
            chmod(pki + "/\(device).password", 0o600)
        }
        let edge = try await MosquittoBroker.started(
            options: MosquittoBroker.Options(
                allowAnonymous: false,
                users: passwords,
                persistence: true,
                extraConfiguration: try Self.edgeLines(
                    aclPath: edgeACL,
                    centralPort: tlsPort,
                    password: "bridge-secret",
                    caFile: tls.caFile
                )
            )
        )
        #expect(
            await central.broker.waitForLog(containing: "as edge-site-1", timeout: 30),
            "the bridge did not connect:\n\(edge.log.suffix(1500))\n\(central.broker.log.suffix(1500))"
        )

        // adv-e1 does not sign (only the brokers protect it), adv-e2 signs. Their configs use the central fixture's
        // key and the edge's password files.
        func start(_ device: String, signed: Bool) throws -> AgentProcess {
            try AgentProcess(
                config: central.agentConfig(device, signed: signed, port: edge.port)
                    .replacingOccurrences(of: central.passwordFile(device), with: pki + "/\(device).password")
            )
        }
        let e1 = try start("adv-e1", signed: false)
        let e2 = try start("adv-e2", signed: true)
        defer {
            e1.runner.kill()
            e2.runner.kill()
        }
        for device in ["adv-e1", "adv-e2"] {
            try await observer.waitFor(count: 5, on: "motion/\(device)/accelerometer", timeout: 40)
        }
        let settings = ["adv-e1", "adv-e2"].map { Fleet.settings(Fleet.status(observer, $0)) }

        // adv-mallory's attempts on the edge (where the bridge would carry them to every site).
        let command = { (id: String) in #"{"id":"\#(id)","command":"set-rate","stream":"accelerometer","rate_hz":5}"# }
        let document = #"{"version": 88, "streams": {"accelerometer": {"enabled": false}}, "by": "mallory"}"#
        let attempts: [(String, String, Bool)] = [
            ("motion/fleet/desired", document, true),
            ("motion/fleet/control", command("mallory-fleet"), false),
            ("motion/adv-e1/control", command("mallory-e1"), false),
            ("motion/adv-e2/control", command("mallory-e2"), false),
            ("motion/adv-e1/desired", document, true),
            ("motion/group/site-1/control", command("mallory-group"), false),
            ("motion/group/site-1/desired", document, true),
            ("motion/adv-e1/status", #"{"state":"offline","by":"mallory"}"#, true),
            ("motion/adv-e1/accelerometer", #"{"seq":1,"by":"mallory"}"#, false),
            ("motion-ctl/motion-ctl-0000/reply/adv-e1", #"{"id":"x","by":"mallory"}"#, false),
        ]
        for (topic, payload, retain) in attempts {
            let code = try await central.publishAs(
                "adv-mallory",
                topic,
                payload,
                retain: retain,
                port: edge.port,
                password: passwords["adv-mallory"]
            )
            #expect(
                code == Self.notAuthorized,
                "on the edge, adv-mallory's \(topic): reason code \(String(describing: code))"
            )
        }
        // Its own status it may publish, and the bridge carries it: the way out works.
        let own = try await central.publishAs(
            "adv-mallory",
            "motion/adv-mallory/status",
            #"{"state":"online","by":"mallory"}"#,
            retain: true,
            port: edge.port,
            password: passwords["adv-mallory"]
        )
        #expect(own.map { Self.accepted.contains($0) } == true)
        try await Fleet.until("adv-mallory's own status across the bridge", timeout: 20) {
            !observer.messages(on: "motion/adv-mallory/status").isEmpty
        }
        // A client id takeover on the edge.
        let takeover = try await central.publishAs(
            "adv-mallory",
            "motion/adv-mallory/metrics",
            #"{"by":"mallory"}"#,
            port: edge.port,
            password: passwords["adv-mallory"],
            clientID: "motion-agent-adv-e1"
        )
        #expect(takeover.map { Self.accepted.contains($0) } == true)

        // The way in works: the operator's commands on the central broker reach both devices through the bridge.
        try await central.expectAnswers("adv-e1", signed: false, "through the bridge")
        try await central.expectAnswers("adv-e2", "through the bridge")
        let carried = observer.messages.filter {
            String(decoding: $0.payload, as: UTF8.self).contains("mallory") && $0.topic != "motion/adv-mallory/status"
                && $0.topic != "motion/adv-mallory/metrics"
        }
        #expect(carried.isEmpty, "carried to the central broker: \(carried.map(\.topic))")
        #expect(["adv-e1", "adv-e2"].map { Fleet.settings(Fleet.status(observer, $0)) } == settings)
        #expect(
            !observer.messages(on: "motion/adv-e1/status").contains { payloadJSON($0)["state"] as? String == "offline" }
        )
        for (device, agent) in [("adv-e1", e1), ("adv-e2", e2)] {
            #expect(!agent.runner.standardError.contains("mallory"), "\(device) saw adv-mallory's messages")
            #expect(
                agent.runner.standardError.components(separatedBy: "connected to the broker").count == 2,
                "\(device) connected once: \(agent.runner.standardError.suffix(1000))"
            )
            let problems = Fleet.seqProblems(observer.messages(on: "motion/\(device)/accelerometer"))
            #expect(problems.isEmpty, "\(device)'s stream: \(problems.prefix(10))")
        }
        await observer.close()
        await edge.stop()
    }
}
