import AgentConfig
import AgentControl
import AgentPorts
import Foundation
import MosquittoTransport
import MotionWire
import Synchronization
import TestSupport
import Testing

/// Issue 27's attacks on signed control, tried for real: a mosquitto with the shipped ACL and account lines, two
/// signing agents in group `lab` (adv-a, adv-b) and one that does not sign (adv-u), the operators' tools, and an
/// attacker who holds an operator *account* (not the key) and has captured what operators signed. Every attack
/// must be refused with a clear line in the agent's log, and nothing else disturbed: the streams keep their seq,
/// the other devices their settings, and every agent keeps answering.
@Suite(.timeLimit(.minutes(10)), .serialized) struct AdversarialControlEndToEndTests {
    typealias Fleet = AdversarialFleet

    /// Holds the agents (one is restarted) and the observer for the steps below.
    final class Run: Sendable {
        let fleet: Fleet
        let observer: CapturingSubscriber
        let agents: Mutex<[String: AgentProcess]>

        init(fleet: Fleet, observer: CapturingSubscriber, agents: [String: AgentProcess]) {
            self.fleet = fleet
            self.observer = observer
            self.agents = Mutex(agents)
        }

        func agent(_ device: String) -> AgentProcess { agents.withLock { $0[device]! } }

        /// Publishes `payload` as the watcher (an operator account), QoS 1, optionally with an MQTT 5 response
        /// topic; returns once the broker acknowledged it (mosquitto queues a message to its subscribers first).
        func publish(
            _ topic: String,
            _ payload: [UInt8],
            retain: Bool = false,
            responseTopic: String? = nil
        ) async throws {
            let before = observer.messages(on: topic).count
            if let responseTopic {
                try observer.client.publishRequest(
                    topic: topic,
                    payload: payload,
                    responseTopic: responseTopic,
                    correlationData: Array("adversary".utf8)
                )
            } else {
                _ = try payload.withUnsafeBytes {
                    try observer.client.publish(topic: topic, payload: $0, qos: 1, retain: retain)
                }
            }
            // The watcher reads what it publishes: its own message coming back is the broker having taken it.
            try await Fleet.until("the broker to take the message on \(topic)", timeout: 10) {
                observer.messages(on: topic).count > before
            }
        }

        var replyA: String { "motion/adv-a/control/reply" }
        var replyB: String { "motion/adv-b/control/reply" }
        var replyU: String { "motion/adv-u/control/reply" }
    }

    @Test func signedControlHoldsAgainstMovedReplayedForgedRedirectedAndFloodedMessages() async throws {
        let fleet = try await Fleet(
            devices: ["adv-a", "adv-b", "adv-u"],
            groups: ["adv-a": ["lab"], "adv-b": ["lab"]]
        )
        let observer = try await fleet.observer()
        let run = Run(
            fleet: fleet,
            observer: observer,
            agents: [
                "adv-a": try fleet.startAgent("adv-a", signed: true, groups: ["lab"]),
                "adv-b": try fleet.startAgent("adv-b", signed: true, groups: ["lab"]),
                "adv-u": try fleet.startAgent("adv-u", signed: false),
            ]
        )
        defer { run.agents.withLock { for agent in $0.values { agent.runner.kill() } } }
        for device in ["adv-a", "adv-b", "adv-u"] {
            try await observer.waitFor(count: 5, on: "motion/\(device)/accelerometer", timeout: 30)
        }
        // Each stage expects its refusals logged one by one, so it starts with the refusals' budget full: beyond
        // it the door only counts them (ControlAdmission), and how much of it a stage left depends on how fast
        // the broker delivered the stage's messages.
        try await Self.keysTheDeviceDoesNotTrust(run)
        try await Self.untilTheRefusalBudgetRefills()
        let captured = try await Self.commandsCannotBeMoved(run)
        try await Self.untilTheRefusalBudgetRefills()
        try await Self.repliesGoOnlyToTheOperatorsNamespace(run)
        try await Self.untilTheRefusalBudgetRefills()
        try await Self.junkAndReplaysCannotCrowdOutSignedCommands(run, captured: captured)
        try await Self.untilTheRefusalBudgetRefills()
        try await Self.yamlNeverReadsNetworkInput(run)
        try await Self.untilTheRefusalBudgetRefills()
        try await Self.desiredDocumentsCannotBeRemovedMovedOrPlanted(run)
        try await Self.untilTheRefusalBudgetRefills()
        try await Self.theKeptStateHoldsAcrossARestart(run, captured: captured)
        try await Self.untilTheRefusalBudgetRefills()
        try await Self.documentsCannotBeRolledBackOrFrozen(run)

        // Nothing else disturbed: every device kept streaming, one seq after the other (adv-a ran twice).
        for (device, restarts) in [("adv-a", 1), ("adv-b", 0), ("adv-u", 0)] {
            // Still streaming after every attack: three more messages (0.3–0.6 s at 10 or 5 Hz).
            let topic = "motion/\(device)/accelerometer"
            let streamed = observer.messages(on: topic).count
            _ = try await observer.waitFor(count: streamed + 3, on: topic, timeout: 10)
            let stream = observer.messages(on: topic)
            let problems = Fleet.seqProblems(stream, restarts: restarts)
            #expect(problems.isEmpty, "\(device)'s stream: \(problems.prefix(10))")
            let log = run.agent(device).runner.standardError
            #expect(!log.contains("\u{1B}"), "\(device)'s log holds a raw ESC")
            #expect(run.agent(device).runner.isRunning, "\(device) is still running")
        }
        await observer.close()
    }

    /// The time an empty refusals' budget takes to fill again, at the defaults the agents run with.
    static func untilTheRefusalBudgetRefills() async throws {
        let door = ControlDoorSettings()
        try await Task.sleep(for: .seconds(door.refusalBurst / door.refusalsPerSecond))
    }

    // MARK: - keys

    /// A command signed by a key the device does not trust, and one signed by another key under the trusted
    /// key's id: both 401, logged, nothing applied.
    static func keysTheDeviceDoesNotTrust(_ run: Run) async throws {
        let before = Fleet.settings(Fleet.status(run.observer, "adv-a"))
        // The operator's ctl with a key adv-a does not trust: refused, and the ctl is told why.
        let rogueFile = run.fleet.directory + "/rogue.key"
        try Fleet.rogueKey.fileText.write(toFile: rogueFile, atomically: true, encoding: .utf8)
        chmod(rogueFile, 0o600)
        let rogue = try await run.fleet.cli(
            ["ctl"],
            ["--timeout", "5", "--signing-key", rogueFile, "--device", "adv-a", "stop", "stream=accelerometer"]
        )
        #expect(
            rogue.code == 1 && rogue.output.hasPrefix("adv-a\tFAILED\t401")
                && rogue.output.contains("which this device does not trust"),
            "a key the device does not trust: \(rogue.output)\(rogue.errors)"
        )
        let impostor = Fleet.signedCommand(
            Fleet.command("impostor-1", "stop", [("stream", .string("accelerometer"))]),
            target: "motion/adv-a/control",
            key: Fleet.impostorKey
        )
        try await run.publish("motion/adv-a/control", impostor)
        // An unverified key id with an escape sequence in it: logged, never raw.
        try await run.publish(
            "motion/adv-a/control",
            Array(#"{"key":"\u001b]0;owned\u0007","signature":"AAAA","signed":"e30="}"#.utf8)
        )
        let agent = run.agent("adv-a")
        await Fleet.expectLog(agent, "which this device does not trust", "a key the device does not trust")
        await Fleet.expectLog(agent, "the signature does not match", "another key under a trusted key's id")
        await Fleet.expectLog(agent, "\\u{1B}]0;owned\\u{7}", "an escape sequence in a key id")
        try await run.fleet.expectAnswers("adv-a", "after the forged commands")
        let replies = Fleet.replies(run.observer, on: run.replyA, id: "impostor-1")
        #expect(replies.map { $0["code"] as? Int } == [401], "another key under a trusted key's id: \(replies)")
        #expect(Fleet.settings(Fleet.status(run.observer, "adv-a")) == before, "a forged command changed adv-a")
    }

    // MARK: - moving and replaying commands

    /// A signed command captured on adv-a's control topic is refused on adv-b's, on the group's and on the
    /// fleet's (its signature names adv-a's topic), and a second copy on adv-a's own topic changes nothing.
    /// Returns the captured envelope.
    static func commandsCannotBeMoved(_ run: Run) async throws -> [UInt8] {
        let fleet = run.fleet
        let observer = run.observer
        let settingsB = Fleet.settings(Fleet.status(observer, "adv-b"))
        let seen = observer.messages(on: "motion/adv-a/control").count
        let setRate = try await fleet.ctl(["--device", "adv-a", "set-rate", "stream=accelerometer", "rate_hz=5"])
        #expect(setRate.code == 0 && setRate.output.hasPrefix("adv-a\tok\t200"), "\(setRate.output)\(setRate.errors)")
        // What an operator account reads: the envelope as the ctl published it. The agent's answer can reach the
        // ctl before the broker hands the same message to this observer.
        try await Fleet.until("the observer to read the ctl's command", timeout: 10) {
            observer.messages(on: "motion/adv-a/control").count > seen
        }
        let captured = try #require(observer.messages(on: "motion/adv-a/control").dropFirst(seen).first?.payload)
        let capturedID = try #require(Fleet.signedObject(captured)?.first { $0.key == "id" }?.value.string)
        try await Fleet.until("adv-a's status at 5 Hz", timeout: 20) {
            Fleet.settings(Fleet.status(observer, "adv-a"))["streams.accelerometer.rate_hz"]?.hasPrefix("5 ") == true
        }

        for topic in ["motion/adv-b/control", "motion/group/lab/control", "motion/fleet/control"] {
            try await run.publish(topic, captured)
        }
        try await run.publish("motion/adv-a/control", captured)
        await Fleet.expectLog(
            run.agent("adv-b"),
            "was signed for motion/adv-a/control and arrived on motion/adv-b/control",
            "adv-a's command replayed on adv-b's topic"
        )
        await Fleet.expectLog(
            run.agent("adv-b"),
            "was signed for motion/adv-a/control and arrived on motion/group/lab/control",
            "adv-a's command replayed on the group's topic"
        )
        await Fleet.expectLog(
            run.agent("adv-b"),
            "was signed for motion/adv-a/control and arrived on motion/fleet/control",
            "adv-a's command replayed on the fleet's topic"
        )
        await Fleet.expectLog(
            run.agent("adv-a"),
            "was signed for motion/adv-a/control and arrived on motion/group/lab/control",
            "adv-a's command replayed on the group's topic"
        )
        await Fleet.expectLog(
            run.agent("adv-a"),
            "\(capturedID) arrived again with the same counter",
            "adv-a's command replayed to adv-a"
        )
        try await fleet.expectAnswers("adv-a", "after the replays")
        try await fleet.expectAnswers("adv-b", "after the replays")
        // adv-b answered the moved copies with 401 and changed nothing; adv-a answered its command once.
        let movedReplies = Fleet.replies(observer, on: run.replyB, id: capturedID).map { $0["code"] as? Int }
        #expect(movedReplies == [401, 401, 401], "adv-b's replies to the moved command: \(movedReplies)")
        #expect(
            Fleet.replies(observer, on: run.replyA, id: capturedID).map { $0["code"] as? Int } == [401, 401],
            "adv-a refused the group and fleet copies and did not answer the replay on its own topic"
        )
        #expect(Fleet.settings(Fleet.status(observer, "adv-b")) == settingsB, "adv-b's settings changed")
        return captured
    }

    // MARK: - response topics

    /// MQTT 5 response topics that point elsewhere than the operators' reply namespace — the fleet's control
    /// topic, another device's desired topic, a stream topic, a group's control topic — are not used: the reply
    /// goes to the device's own reply topic, and one publish makes one reply per device, never more messages.
    static func repliesGoOnlyToTheOperatorsNamespace(_ run: Run) async throws {
        let observer = run.observer
        let fleet = run.fleet
        let counts = { (topic: String) in observer.messages(on: topic).count }
        let fleetControl = counts("motion/fleet/control")
        let groupControl = counts("motion/group/lab/control")
        let desiredB = counts("motion/adv-b/desired")
        let settingsB = Fleet.settings(Fleet.status(observer, "adv-b"))

        // Junk (an unsigned ping) on the fleet topic, answers asked on the fleet topic: the signing devices
        // refuse it, the one that does not sign answers it — each on its own reply topic, once.
        try await run.publish(
            "motion/fleet/control",
            Array(#"{"id":"amplify-1","command":"ping"}"#.utf8),
            responseTopic: "motion/fleet/control"
        )
        // Signed pings to adv-a asking for the answer on adv-b's desired topic and on adv-b's stream.
        for (id, responseTopic) in [
            ("redirect-desired", "motion/adv-b/desired"), ("redirect-stream", "motion/adv-b/accelerometer"),
        ] {
            try await run.publish(
                "motion/adv-a/control",
                Fleet.signedCommand(Fleet.command(id, "ping"), target: "motion/adv-a/control"),
                responseTopic: responseTopic
            )
        }
        // An unsigned ping to the device that does not sign, answer asked on the group's control topic.
        try await run.publish(
            "motion/adv-u/control",
            Array(#"{"id":"redirect-group","command":"ping"}"#.utf8),
            responseTopic: "motion/group/lab/control"
        )
        for device in ["adv-a", "adv-b", "adv-u"] {
            await Fleet.expectLog(
                run.agent(device),
                "outside the operators' reply namespace",
                "a response topic outside motion-ctl/<client>/reply sent to \(device)"
            )
        }
        await Fleet.expectLog(run.agent("adv-a"), "asked for its answer on motion/adv-b/desired", "redirect-desired")
        try await Fleet.until("each device's answer on its own reply topic", timeout: 20) {
            Fleet.replies(observer, on: run.replyA, id: "amplify-1").count == 1
                && Fleet.replies(observer, on: run.replyB, id: "amplify-1").count == 1
                && Fleet.replies(observer, on: run.replyU, id: "amplify-1").count == 1
                && Fleet.replies(observer, on: run.replyA, id: "redirect-desired").count == 1
                && Fleet.replies(observer, on: run.replyA, id: "redirect-stream").count == 1
                && Fleet.replies(observer, on: run.replyU, id: "redirect-group").count == 1
        }
        // After a ping answered by each device, everything they published in between has reached the observer
        // (the broker delivers in order): any amplification would be counted below.
        for device in ["adv-a", "adv-b"] { try await fleet.expectAnswers(device, "after the redirections") }
        try await fleet.expectAnswers("adv-u", signed: false, "after the redirections")
        #expect(
            Fleet.replies(observer, on: run.replyU, id: "amplify-1").first?["code"] as? Int == 200
                && Fleet.replies(observer, on: run.replyA, id: "amplify-1").first?["code"] as? Int == 401,
            "the unsigned ping is answered by the device that does not sign and refused by those that do"
        )
        #expect(counts("motion/fleet/control") == fleetControl + 1, "one junk publish on the fleet topic multiplied")
        #expect(counts("motion/group/lab/control") == groupControl, "a reply went to the group's control topic")
        #expect(counts("motion/adv-b/desired") == desiredB, "a reply went to adv-b's desired topic")
        let everywhere = observer.messages.filter {
            ["amplify-1", "redirect-desired", "redirect-stream", "redirect-group"]
                .contains(payloadJSON($0)["id"] as? String ?? "")
        }
        #expect(
            Set(everywhere.map(\.topic)) == [
                run.replyA, run.replyB, run.replyU, "motion/fleet/control", "motion/adv-u/control",
            ] && everywhere.count == 3 + 1 + 2 + 1 + 1,
            "the redirected commands' messages: \(everywhere.map { "\($0.topic)" })"
        )
        #expect(Fleet.settings(Fleet.status(observer, "adv-b")) == settingsB, "adv-b's settings changed")
    }

    // MARK: - floods

    /// Unsigned junk, envelopes with bad signatures, moved envelopes and non-JSON, hundreds a second from an
    /// operator account, while the operator sends signed commands: every signed command is answered (the door
    /// keeps a separate, small budget for refusals of what it could not verify, and answers at most that many);
    /// then the same with a captured signed command replayed as fast: replays draw on the refusals' budget too.
    static func junkAndReplaysCannotCrowdOutSignedCommands(_ run: Run, captured: [UInt8]) async throws {
        let fleet = run.fleet
        let observer = run.observer
        let flooder = try await fleet.client("flooder")
        let target = "motion/adv-a/control"
        let forged = SignedEnvelope.seal(
            [
                ("target", .string(target)), ("counter", .number(String(Fleet.nextCounter()))),
                ("id", .string("junk-forged")), ("command", .string("stop")), ("stream", .string("accelerometer")),
            ],
            with: Fleet.impostorKey
        )
        let moved = Fleet.signedCommand(Fleet.command("junk-moved", "stop"), target: "motion/adv-b/control")
        let junk: [@Sendable (Int) -> [UInt8]] = [
            { Array(#"{"id":"junk-\#($0)","command":"stop","stream":"accelerometer"}"#.utf8) },
            { _ in forged },
            { _ in moved },
            { Array("\u{1B}[2J not JSON \($0)".utf8) },
        ]

        // Replays at 500 a second: each is refused on its counter before any signature check, a parse's cost. The
        // junk at 200: half of it (the forged and the moved envelopes) costs an Ed25519 verification each, and a
        // debug build's unoptimised BoringSSL on a loaded 2-core host fell behind 250 of those a second (the
        // operator's set-rate got no reply within 20 s).
        let floods: [(name: String, payload: @Sendable (Int) -> [UInt8], pause: Int, logged: String)] = [
            ("junk", { i in junk[i % junk.count](i) }, 5, "refused without an answer"),
            ("replays of a captured command", { _ in captured }, 2, "arrived again with the same counter"),
        ]
        for (name, payload, pause, logged) in floods {
            let repliesBefore = observer.messages(on: run.replyA).count
            let started = ContinuousClock.now
            let sent = Atomic<Int>(0)
            let stop = Atomic<Bool>(false)
            let flood = Task {
                var i = 0
                // At least 600 messages, and on until the operator's commands are through.
                while !stop.load(ordering: .relaxed) || i < 600 {
                    _ = try? payload(i).withUnsafeBytes {
                        try flooder.publish(topic: target, payload: $0, qos: 0, retain: false)
                    }
                    i += 1
                    sent.store(i, ordering: .relaxed)
                    try? await Task.sleep(for: .milliseconds(pause))
                }
            }
            try await Fleet.until("the flood to start", timeout: 20) { sent.load(ordering: .relaxed) >= 100 }
            var answered: [String] = []
            for command in [["ping"], ["status"], ["set-rate", "stream=accelerometer", "rate_hz=10"], ["ping"]] {
                let result = try await fleet.ctl(["--device", "adv-a"] + command, timeout: 20)
                answered.append(result.output.split(separator: "\t").prefix(3).joined(separator: " "))
                #expect(
                    result.code == 0 && result.output.hasPrefix("adv-a\tok\t200"),
                    "during \(name): the signed \(command[0]) got \(result.output)\(result.errors)"
                )
            }
            stop.store(true, ordering: .relaxed)
            await flood.value
            // Replies published after the flood's last message reach the observer before this ping's.
            try await fleet.expectAnswers("adv-a", "after the \(name)")
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            let refusals = observer.messages(on: run.replyA).dropFirst(repliesBefore).map(payloadJSON).filter {
                $0["ok"] as? Bool == false
            }
            // The door answers at most its refusal budget (burst 5, then 2 a second), whatever was sent.
            let budget = 5 + Int((2 * seconds).rounded(.up)) + 1
            #expect(
                refusals.count <= budget,
                "\(refusals.count) refusals answered for \(sent.load(ordering: .relaxed)) \(name) in \(seconds) s (budget \(budget))"
            )
            #expect(refusals.allSatisfy { $0["code"] as? Int != 429 }, "a rate-limit refusal during the \(name)")
            await Fleet.expectLog(run.agent("adv-a"), logged, "the \(name)")
        }
        await flooder.disconnect(flushTimeout: 1)
        try await Fleet.until("adv-a's status at 10 Hz", timeout: 20) {
            Fleet.settings(Fleet.status(observer, "adv-a"))["streams.accelerometer.rate_hz"]?.hasPrefix("10 ") == true
        }
    }

    // MARK: - YAML

    /// The 462-byte YAML document whose one mapping key is a nested alias (a billion laughs when a YAML parser
    /// compares keys), which held the control door for 30 s when network input was YAML.
    static let aliasBomb = """
        # 9^10 lols
        version: 1
        a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]
        b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
        c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
        d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
        e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
        f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
        g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
        h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
        i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
        ? [*i, *i, *i, *i, *i, *i, *i, *i, *i]
        : 1

        """

    /// The alias bomb on desired and control topics — as it is, and signed by the operator's key (so it passes the
    /// signature and reaches the document parser) — is refused as not JSON, and a ping right after is answered.
    static func yamlNeverReadsNetworkInput(_ run: Run) async throws {
        let bomb = Array(aliasBomb.utf8)
        #expect(bomb.count == 462, "the alias bomb is \(bomb.count) bytes")
        let fleet = run.fleet
        try await run.publish("motion/adv-u/desired", bomb)
        await Fleet.expectLog(
            run.agent("adv-u"),
            "device desired state from motion/adv-u/desired refused, the previous state stays in force",
            "the alias bomb on a device that does not sign"
        )
        await Fleet.expectLog(run.agent("adv-u"), "is not valid JSON", "the alias bomb on a device that does not sign")
        try await fleet.expectAnswers("adv-u", signed: false, "right after the alias bomb on its desired topic")
        try await run.publish("motion/adv-u/control", bomb)
        await Fleet.expectLog(run.agent("adv-u"), "control command refused (400)", "the alias bomb as a command")
        try await fleet.expectAnswers("adv-u", signed: false, "right after the alias bomb on its control topic")

        try await run.publish("motion/adv-a/desired", bomb)
        await Fleet.expectLog(
            run.agent("adv-a"),
            "device desired state from motion/adv-a/desired refused, the previous state stays in force: the desired document is not signed",
            "the alias bomb on a signing device"
        )
        let envelope = StrictJSON.Value.object([
            ("key", .string(Fleet.operatorKey.id)),
            ("signature", .string(Base64.encode(Fleet.operatorKey.signature(of: bomb)))),
            ("signed", .string(Base64.encode(bomb))),
        ]).encoded()
        try await run.publish("motion/adv-a/desired", envelope)
        await Fleet.expectLog(
            run.agent("adv-a"),
            "the signed bytes are not valid JSON",
            "the alias bomb signed by the operator's key"
        )
        try await fleet.expectAnswers("adv-a", "right after the signed alias bomb")
        #expect(Fleet.desired(Fleet.status(run.observer, "adv-u")).isEmpty)
    }

    // MARK: - desired documents

    /// On a signing device: an empty retained payload and an unsigned clear do not remove its signed layer, a
    /// signed group document moved to its device topic and a device document signed for another layer are refused,
    /// and the other device of the group keeps its settings.
    static func desiredDocumentsCannotBeRemovedMovedOrPlanted(_ run: Run) async throws {
        let fleet = run.fleet
        let observer = run.observer
        let agentA = run.agent("adv-a")
        let group = try await fleet.cli(
            ["fleet", "set"],
            ["--signing-key", fleet.keyFile, "--group", "lab", "--wait", "20", "streams.gyroscope.rate_hz=20"]
        )
        #expect(group.code == 0, "\(group.output)\(group.errors)")
        let device = try await fleet.cli(
            ["fleet", "set"],
            ["--signing-key", fleet.keyFile, "--device", "adv-a", "--wait", "20", "streams.gyroscope.rate_hz=40"]
        )
        #expect(device.code == 0, "\(device.output)\(device.errors)")
        try await Fleet.until("adv-a running group lab v1 and device v1", timeout: 20) {
            Fleet.desired(Fleet.status(observer, "adv-a")) == ["group lab": 1, "device": 1]
        }
        let settingsA = Fleet.settings(Fleet.status(observer, "adv-a"))
        let settingsB = Fleet.settings(Fleet.status(observer, "adv-b"))
        #expect(settingsA["streams.gyroscope.rate_hz"] == "40 (device v1)", "\(settingsA)")
        #expect(settingsB["streams.gyroscope.rate_hz"] == "20 (group lab v1)", "\(settingsB)")

        // An empty retained payload (what removed the layer before): nothing changes.
        try await run.publish("motion/adv-a/desired", [], retain: true)
        await Fleet.expectLog(
            agentA,
            "an empty retained payload on motion/adv-a/desired leaves the device layer as it is",
            "an empty retained payload on a signed layer"
        )
        // An unsigned clear, newer than the version in force.
        let unsigned = "refused, the previous state stays in force: the desired document is not signed"
        let unsignedBefore = agentA.runner.standardError.components(separatedBy: unsigned).count
        try await run.publish("motion/adv-a/desired", Array(#"{"version": 50, "clear": true}"#.utf8))
        // The group's signed document, moved to the device's topic.
        let groupDocument = try #require(observer.messages(on: "motion/group/lab/desired").last?.payload)
        try await run.publish("motion/adv-a/desired", groupDocument)
        try await run.publish("motion/adv-b/desired", groupDocument)
        // A document signed for adv-a's topic but the fleet's layer.
        let otherLayer = SignedEnvelope.seal(
            [
                ("target", .string("motion/adv-a/desired")), ("layer", .string("fleet")),
                ("version", .number("60")), ("clear", .bool(true)),
            ],
            with: Fleet.operatorKey
        )
        try await run.publish("motion/adv-a/desired", otherLayer)
        try await Fleet.until("adv-a refusing the unsigned clear", timeout: 20) {
            agentA.runner.standardError.components(separatedBy: unsigned).count > unsignedBefore
        }
        await Fleet.expectLog(
            agentA,
            "was signed for motion/group/lab/desired and arrived on motion/adv-a/desired",
            "the group's document moved to a device topic"
        )
        await Fleet.expectLog(
            run.agent("adv-b"),
            "was signed for motion/group/lab/desired and arrived on motion/adv-b/desired",
            "the group's document moved to a device topic"
        )
        await Fleet.expectLog(
            agentA,
            "was signed for the layer fleet and arrived for the device layer",
            "a document signed for another layer"
        )
        try await fleet.expectAnswers("adv-a", "after the documents")
        try await fleet.expectAnswers("adv-b", "after the documents")
        try await Fleet.until("adv-a's status reporting the last refusal", timeout: 20) {
            let refused = (Fleet.status(observer, "adv-a")["configuration"] as? [String: Any])?["refused"]
            return ((refused as? [String: Any])?["reason"] as? String)?.contains("layer fleet") == true
        }
        #expect(Fleet.desired(Fleet.status(observer, "adv-a")) == ["group lab": 1, "device": 1])
        #expect(Fleet.settings(Fleet.status(observer, "adv-a")) == settingsA, "adv-a's settings changed")
        #expect(Fleet.settings(Fleet.status(observer, "adv-b")) == settingsB, "adv-b's settings changed")
    }

    /// adv-a stopped, its kept device document altered in the state directory, started again: the altered
    /// document is refused at load (with the file named) and never applied; the signed command captured before
    /// the restart, replayed, is refused (the counters are kept), and so is its counter under a new id.
    static func theKeptStateHoldsAcrossARestart(_ run: Run, captured: [UInt8]) async throws {
        let fleet = run.fleet
        let observer = run.observer
        let old = run.agent("adv-a")
        old.runner.terminate()
        #expect(
            await old.runner.waitForExit(timeout: 20) == 0,
            "adv-a stopped: \(old.runner.standardError.suffix(800))"
        )
        let kept = old.directory + "/state/desired/device.json"
        let envelope = try #require(FileManager.default.contents(atPath: kept).map { Array($0) })
        let members = try #require(Fleet.signedObject(envelope))
        // The document as kept, with the gyroscope's rate changed and the signature left as it was.
        let altered = StrictJSON.Value.object(
            members.map { member in
                member.key == "streams"
                    ? (member.key, .object([("gyroscope", .object([("rate_hz", .number("7"))]))])) : member
            }
        ).encoded()
        let outer = try #require(try? StrictJSON.parse(envelope, limits: .document))
        let tampered = StrictJSON.Value.object([
            ("key", outer["key"]!), ("signature", outer["signature"]!), ("signed", .string(Base64.encode(altered))),
        ]).encoded()
        #expect(tampered != envelope)
        try Data(tampered).write(to: URL(fileURLWithPath: kept))

        let statuses = observer.messages(on: "motion/adv-a/status").count
        let restarted = try AgentProcess(
            config: try String(contentsOfFile: old.configPath, encoding: .utf8),
            directory: old.directory
        )
        run.agents.withLock { $0["adv-a"] = restarted }
        await Fleet.expectLog(restarted, "device.json: the signature does not match", "the kept envelope altered")
        await Fleet.expectLog(
            restarted,
            "the device layer is left out until its next desired document arrives",
            "the kept envelope altered"
        )
        try await Fleet.until("adv-a online again", timeout: 30) {
            observer.messages(on: "motion/adv-a/status").dropFirst(statuses).contains {
                payloadJSON($0)["state"] as? String == "online"
            }
        }

        // The captured command, and its counter under a new id.
        try await run.publish("motion/adv-a/control", captured)
        let members2 = try #require(Fleet.signedObject(captured))
        let counter = try #require(members2.first { $0.key == "counter" }?.value.integer)
        try await run.publish(
            "motion/adv-a/control",
            Fleet.signedCommand(
                Fleet.command(
                    "same-counter",
                    "set-rate",
                    [("stream", .string("accelerometer")), ("rate_hz", .number("5"))]
                ),
                target: "motion/adv-a/control",
                counter: counter
            )
        )
        await Fleet.expectLog(
            restarted,
            "was used already: a replayed command is refused",
            "the captured command replayed after a restart"
        )
        try await fleet.expectAnswers("adv-a", "after the restart")
        let capturedID = try #require(members2.first { $0.key == "id" }?.value.string)
        for id in [capturedID, "same-counter"] {
            let last = Fleet.replies(observer, on: run.replyA, id: id).last
            #expect(
                last?["code"] as? Int == 401 && (last?["message"] as? String)?.contains("was used already") == true,
                "\(id) after the restart: \(String(describing: last))"
            )
        }
        let status = Fleet.status(observer, "adv-a")
        #expect(
            Fleet.desired(status)["device"] == nil,
            "the altered kept document was applied: \(Fleet.desired(status))"
        )
        let rates = observer.messages(on: "motion/adv-a/status").compactMap {
            Fleet.settings(payloadJSON($0))["streams.gyroscope.rate_hz"]
        }
        #expect(!rates.contains { $0.hasPrefix("7 ") }, "the altered rate appeared: \(rates)")
        #expect(Fleet.settings(status)["streams.accelerometer.rate_hz"]?.hasPrefix("10 ") == true)
    }

    /// The group's documents: an older signed one replayed after a newer one and after a signed clear is
    /// ignored; an old signed document retained again (a replay an operator account can make) and a planted
    /// unsigned one with a version near 2⁵³ are not built upon by `fleet set --signing-key` (which says why), and
    /// `--replace` publishes a fresh document above every version the devices run.
    static func documentsCannotBeRolledBackOrFrozen(_ run: Run) async throws {
        let fleet = run.fleet
        let observer = run.observer
        let topic = "motion/group/lab/desired"
        let v1 = try #require(observer.messages(on: topic).last?.payload)
        func set(_ arguments: [String]) async throws -> AdversarialFleet.Output {
            try await fleet.cli(
                ["fleet", "set"],
                ["--signing-key", fleet.keyFile, "--group", "lab", "--wait", "20"] + arguments
            )
        }
        func bothRun(_ versions: [String: Int], _ what: String) async throws {
            try await Fleet.until(what, timeout: 20) {
                ["adv-a", "adv-b"].allSatisfy {
                    Fleet.desired(Fleet.status(observer, $0))["group lab"] == versions[$0] ?? versions["*"]
                }
            }
        }
        let v2 = try await set(["streams.gyroscope.rate_hz=25"])
        #expect(v2.code == 0, "\(v2.output)\(v2.errors)")
        try await bothRun(["*": 2], "group lab v2 on both devices")
        let v2Payload = try #require(observer.messages(on: topic).last?.payload)
        try await run.publish(topic, v1)
        for device in ["adv-a", "adv-b"] {
            await Fleet.expectLog(run.agent(device), "v1 is older than v2 in force: ignored", "v1 after v2")
        }
        let clear = try await fleet.cli(
            ["fleet", "clear"],
            ["--signing-key", fleet.keyFile, "--group", "lab", "--wait", "20"]
        )
        #expect(clear.code == 0, "\(clear.output)\(clear.errors)")
        try await bothRun(["*": 3], "the group's clear (v3) on both devices")
        // The old v2, retained again: every device ignores it…
        try await run.publish(topic, v2Payload, retain: true)
        for device in ["adv-a", "adv-b"] {
            await Fleet.expectLog(run.agent(device), "v2 is older than v3 in force: ignored", "v2 after the clear")
        }
        #expect(
            Fleet.settings(Fleet.status(observer, "adv-b"))["streams.gyroscope.rate_hz"]?.hasSuffix("(config.yaml)")
                == true,
            "the cleared group's rate came back"
        )
        // …and the operator's next edit does not build on it (it would sign v2's settings again as v3).
        let onReplay = try await set(["streams.gyroscope.rate_hz=30"])
        #expect(
            onReplay.code != 0 && onReplay.errors.contains("--replace"),
            "fleet set built on a replayed older document: \(onReplay.output)\(onReplay.errors)"
        )
        let fresh = try await set(["--replace", "streams.gyroscope.rate_hz=30"])
        #expect(fresh.code == 0 && fresh.output.contains("v4"), "\(fresh.output)\(fresh.errors)")
        try await bothRun(["*": 4], "the fresh v4 on both devices")

        // A planted unsigned document whose version would freeze the layer.
        let planted = #"{"version": 9007199254740991, "streams": {"accelerometer": {"enabled": false}}}"#
        try await run.publish(topic, Array(planted.utf8), retain: true)
        for device in ["adv-a", "adv-b"] {
            await Fleet.expectLog(
                run.agent(device),
                "group lab desired state from motion/group/lab/desired refused, the previous state stays in force: the desired document is not signed",
                "a planted unsigned document"
            )
        }
        let onPlanted = try await set(["streams.gyroscope.rate_hz=35"])
        #expect(
            onPlanted.code != 0 && onPlanted.errors.contains("is not one to build on"),
            "fleet set built on the planted document: \(onPlanted.output)\(onPlanted.errors)"
        )
        let replaced = try await set(["--replace", "streams.gyroscope.rate_hz=35"])
        #expect(replaced.code == 0 && replaced.output.contains("v5"), "\(replaced.output)\(replaced.errors)")
        try await bothRun(["*": 5], "the fresh v5 on both devices")
        for device in ["adv-a", "adv-b"] {
            let settings = Fleet.settings(Fleet.status(observer, device))
            #expect(settings["streams.gyroscope.rate_hz"] == "35 (group lab v5)", "\(device): \(settings)")
            #expect(settings["streams.accelerometer.enabled"] == "true (config.yaml)", "\(device): \(settings)")
        }
    }
}
