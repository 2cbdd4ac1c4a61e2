import AgentConfig
import AgentControl
import AgentPorts
import AgentSimulation
import FleetOperations
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// The fleet issue 27's attacks on signed control aim at, in the simulation: two signing agents in group `lab`
/// (adv-a, adv-b) and one that does not sign (adv-u), each streaming the accelerometer at 10 Hz, QoS 1, so an
/// observer sees every seq; the operators' tool (`operator`, signing with the operators' key) and an attacker who
/// holds an operator account, not the key, and has captured what operators signed (`observer`: it reads
/// `motion/#` and `motion-ctl/#` and publishes what the attacker sends). Every device logs into its own recorder.
///
/// The broker's ACL is not modelled (the attacker's account may publish on these topics under the shipped ACL;
/// what the ACL refuses is AdversarialAccountsEndToEndTests').
final class ControlAdversaryFleet {
    static let devices = ["adv-a", "adv-b", "adv-u"]

    let world = SimulationWorld()
    let broker: MemoryBroker
    let observer: SimulatedTool
    let operatorTool: SimulatedTool
    let signer: ControlSigner
    let logs: [String: ControlLogRecorder]
    let agents: [String: SimulatedAgent]
    /// Starts of each device after the first.
    var restarts: [String: Int] = [:]

    init(seed: UInt64 = 27) throws {
        broker = world.addBroker(name: "broker")
        signer = ControlSigner(key: ControlScenario.operatorKey, clock: world.clock)
        var logs: [String: ControlLogRecorder] = [:]
        var agents: [String: SimulatedAgent] = [:]
        for (index, device) in Self.devices.enumerated() {
            var fleet = SimulatedFleetConfiguration()
            fleet.streams = [.init("accelerometer", rateHz: 10, qos: 1)]
            fleet.groups = device == "adv-u" ? [] : ["lab"]
            let log = ControlLogRecorder()
            logs[device] = log
            agents[device] = world.addDevice(
                device,
                configuration: try fleet.configuration(deviceID: device, control: ["max_age_s: 300"]),
                trustedKeys: device == "adv-u" ? nil : ControlScenario.trust,
                seed: seed &+ UInt64(index),
                log: log
            )
        }
        self.logs = logs
        self.agents = agents
        observer = try SimulatedTool(world, clientID: "observer", subscribe: ["motion/#", "motion-ctl/#"])
        operatorTool = try SimulatedTool(world, clientID: "operator")
        for device in Self.devices { world.start(agents[device]!) }
        guard
            observer.waitUntil(
                timeout: 30,
                {
                    Self.devices.allSatisfy { self.observer.messages(on: "motion/\($0)/accelerometer").count >= 5 }
                }
            )
        else {
            throw AgentError("the adversarial fleet did not start streaming within 30 simulated seconds")
        }
    }

    func log(_ device: String) -> ControlLogRecorder { logs[device]! }

    func agent(_ device: String) -> SimulatedAgent { agents[device]! }

    static func reply(_ device: String) -> String { "motion/\(device)/control/reply" }

    static func control(_ device: String) -> String { "motion/\(device)/control" }

    /// Publishes `payload` as the attacker (QoS 1), optionally with an MQTT 5 response topic, and runs the world
    /// until its own copy came back (the broker took it).
    func publish(_ topic: String, _ payload: [UInt8], retain: Bool = false, responseTopic: String? = nil) throws {
        let before = observer.messages(on: topic).count
        if let responseTopic {
            try observer.publishRequest(
                topic,
                payload,
                responseTopic: responseTopic,
                correlationData: Array("adversary".utf8)
            )
        } else {
            try observer.publish(topic, payload, retain: retain)
        }
        _ = observer.waitUntil(timeout: 10) { self.observer.messages(on: topic).count > before }
    }

    /// A signed command for `device` as the operators' ctl sends it; its replies.
    func ctl(
        _ device: String,
        _ id: String,
        _ name: String,
        _ arguments: [(String, StrictJSON.Value)] = []
    )
        throws -> [ControlReply]
    {
        try operatorTool.send(
            Self.control(device),
            signer.signed(ControlSigner.command(id, name, arguments), target: Self.control(device))
        )
    }

    /// A ping to `device` (signed for the devices that sign) answered ok: the agent is alive and has read
    /// everything queued before it.
    func expectAnswers(_ device: String, _ when: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let id = "alive-\(device)-\(Int(world.now * 1000))"
        let replies =
            device == "adv-u"
            ? try operatorTool.send(Self.control(device), #"{"id": "\#(id)", "command": "ping"}"#)
            : try ctl(device, id, "ping")
        #expect(
            replies.count == 1 && replies.first?.ok == true && replies.first?.code == 200,
            "\(device) does not answer \(when): \(replies)",
            sourceLocation: sourceLocation
        )
    }

    /// Replies on `topic` whose id is `id`, as JSON objects.
    func replies(on topic: String, id: String) -> [[String: Any]] { observer.replies(on: topic, id: id) }

    func settings(_ device: String) -> [String: String] { ControlScenario.settings(observer, device) }

    func desired(_ device: String) -> [String: Int] { ControlScenario.desired(observer, device) ?? [:] }

    /// Nothing else disturbed: every device kept streaming, one seq after the other (but for its restarts), logged
    /// no raw escape character, and still runs.
    func expectUndisturbed(sourceLocation: SourceLocation = #_sourceLocation) {
        for device in Self.devices {
            let topic = "motion/\(device)/accelerometer"
            let streamed = observer.messages(on: topic).count
            #expect(
                observer.waitUntil(timeout: 10) { self.observer.messages(on: topic).count >= streamed + 3 },
                "\(device) stopped streaming",
                sourceLocation: sourceLocation
            )
            let problems = ControlScenario.seqProblems(observer.messages(on: topic), restarts: restarts[device] ?? 0)
            #expect(problems.isEmpty, "\(device)'s stream: \(problems.prefix(10))", sourceLocation: sourceLocation)
            #expect(
                !log(device).lines.contains { $0.contains("\u{1B}") },
                "\(device)'s log holds a raw ESC",
                sourceLocation: sourceLocation
            )
            #expect(agent(device).isRunning, "\(device) is still running", sourceLocation: sourceLocation)
        }
    }

    /// Expects a line of `device`'s log to contain `text`, naming `attack` when none does.
    func expectLog(
        _ device: String,
        _ text: String,
        _ attack: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            log(device).contains(text),
            "\(attack): \(device)'s log never said \"\(text)\"; its last lines:\n\(log(device).lines.suffix(12).joined(separator: "\n"))",
            sourceLocation: sourceLocation
        )
    }
}

/// Issue 27's attacks on signed control (moved from AdversarialControlEndToEndTests, one focused test per attack):
/// every attack is refused with a clear line in the agent's log, and nothing else is disturbed — the streams keep
/// their seq, the other devices their settings, and every agent keeps answering.
@Suite struct ControlAdversarySimulationTests {
    typealias Fleet = ControlAdversaryFleet

    /// A command signed by a key the device does not trust, and one signed by another key under the trusted key's
    /// id: both 401, logged, nothing applied; an unverified key id with an escape sequence is logged harmless.
    @Test func keysTheDeviceDoesNotTrustAreRefused() throws {
        let fleet = try Fleet()
        let before = fleet.settings("adv-a")
        // The operator's ctl with a key adv-a does not trust: refused, and told why.
        let rogue = ControlSigner(key: ControlScenario.rogueKey, clock: fleet.world.clock)
        let rogueReplies = try fleet.operatorTool.send(
            Fleet.control("adv-a"),
            rogue.signed(
                ControlSigner.command("rogue-1", "stop", [("stream", .string("accelerometer"))]),
                target: Fleet.control("adv-a")
            )
        )
        #expect(rogueReplies.map(\.code) == [401], "\(rogueReplies)")
        #expect(rogueReplies.first?.message.contains("which this device does not trust") == true, "\(rogueReplies)")
        // Another private key under the trusted key's id.
        let impostor = ControlSigner(key: ControlScenario.impostorKey, clock: fleet.world.clock)
        try fleet.publish(
            Fleet.control("adv-a"),
            impostor.signed(
                ControlSigner.command("impostor-1", "stop", [("stream", .string("accelerometer"))]),
                target: Fleet.control("adv-a")
            )
        )
        // An unverified key id with an escape sequence in it: logged, never raw.
        try fleet.publish(
            Fleet.control("adv-a"),
            Array(#"{"key":"\u001b]0;owned\u0007","signature":"AAAA","signed":"e30="}"#.utf8)
        )
        try fleet.expectAnswers("adv-a", "after the forged commands")
        fleet.expectLog("adv-a", "which this device does not trust", "a key the device does not trust")
        fleet.expectLog("adv-a", "the signature does not match", "another key under a trusted key's id")
        fleet.expectLog("adv-a", "\\u{1B}]0;owned\\u{7}", "an escape sequence in a key id")
        let replies = fleet.replies(on: Fleet.reply("adv-a"), id: "impostor-1")
        #expect(replies.map { $0["code"] as? Int } == [401], "another key under a trusted key's id: \(replies)")
        // On adv-a's reply topic, the two refusals of what the attacker sent (the impostor, the bad key id): one
        // each, nothing more (the rogue key's went to the operator's reply topic).
        #expect(fleet.observer.json(on: Fleet.reply("adv-a")).filter { $0["ok"] as? Bool == false }.count == 2)
        #expect(fleet.settings("adv-a") == before, "a forged command changed adv-a")
        #expect(fleet.observer.status("adv-a")?.streams?["accelerometer"]?.enabled == true)
        fleet.expectUndisturbed()
    }

    /// A signed command captured on adv-a's control topic is refused on adv-b's, on the group's and on the fleet's
    /// (its signature names adv-a's topic), and a second copy on adv-a's own topic changes nothing.
    @Test func aSignedCommandCannotBeMovedOrReplayed() throws {
        let fleet = try Fleet()
        let settingsB = fleet.settings("adv-b")
        let settingsU = fleet.settings("adv-u")
        let seen = fleet.observer.messages(on: Fleet.control("adv-a")).count
        let setRate = try fleet.ctl(
            "adv-a",
            "captured-1",
            "set-rate",
            [("stream", .string("accelerometer")), ("rate_hz", .number("5"))]
        )
        #expect(setRate.map(\.code) == [200], "\(setRate)")
        // What an operator account reads: the envelope as the ctl published it.
        let captured = try #require(fleet.observer.messages(on: Fleet.control("adv-a")).dropFirst(seen).first?.payload)
        #expect(ControlSigner.signedObject(captured)?.first { $0.key == "id" }?.value.string == "captured-1")
        #expect(
            fleet.observer.waitUntil(timeout: 20) {
                fleet.settings("adv-a")["streams.accelerometer.rate_hz"]?.hasPrefix("5 ") == true
            }
        )

        for topic in [
            Fleet.control("adv-b"), "motion/group/lab/control", "motion/fleet/control", Fleet.control("adv-a"),
        ] {
            try fleet.publish(topic, captured)
        }
        try fleet.expectAnswers("adv-a", "after the replays")
        try fleet.expectAnswers("adv-b", "after the replays")
        for topic in [Fleet.control("adv-b"), "motion/group/lab/control", "motion/fleet/control"] {
            fleet.expectLog(
                "adv-b",
                "was signed for motion/adv-a/control and arrived on \(topic)",
                "adv-a's command replayed on \(topic)"
            )
        }
        fleet.expectLog(
            "adv-a",
            "was signed for motion/adv-a/control and arrived on motion/group/lab/control",
            "adv-a's command replayed on the group's topic"
        )
        fleet.expectLog(
            "adv-a",
            "was signed for motion/adv-a/control and arrived on motion/fleet/control",
            "adv-a's command replayed on the fleet's topic"
        )
        fleet.expectLog("adv-a", "captured-1 arrived again with the same counter", "adv-a's command replayed to adv-a")
        // adv-b answered the moved copies with 401 and changed nothing; adv-a refused the group and fleet copies
        // and did not answer the copy on its own topic.
        let movedReplies = fleet.replies(on: Fleet.reply("adv-b"), id: "captured-1").map { $0["code"] as? Int }
        #expect(movedReplies == [401, 401, 401], "adv-b's replies to the moved command: \(movedReplies)")
        let ownReplies = fleet.replies(on: Fleet.reply("adv-a"), id: "captured-1").map { $0["code"] as? Int }
        #expect(ownReplies == [401, 401], "adv-a's replies to the copies: \(ownReplies)")
        #expect(fleet.log("adv-a").count(of: "control command applied") == 2, "the set-rate and the ping, once each")
        #expect(fleet.settings("adv-b") == settingsB, "adv-b's settings changed")
        #expect(fleet.settings("adv-u") == settingsU, "adv-u's settings changed")
        fleet.expectUndisturbed()
    }

    /// MQTT 5 response topics that point elsewhere than the operators' reply namespace — the fleet's control
    /// topic, another device's desired topic, a stream topic, a group's control topic — are not used: the reply
    /// goes to the device's own reply topic, and one publish makes one reply per device, never more messages.
    @Test func repliesGoOnlyToTheOperatorsNamespace() throws {
        let fleet = try Fleet()
        let observer = fleet.observer
        let counts = { (topic: String) in observer.messages(on: topic).count }
        let fleetControl = counts("motion/fleet/control")
        let groupControl = counts("motion/group/lab/control")
        let desiredB = counts("motion/adv-b/desired")
        let settingsB = fleet.settings("adv-b")

        // Junk (an unsigned ping) on the fleet topic, answers asked on the fleet topic: the signing devices
        // refuse it, the one that does not sign answers it — each on its own reply topic, once.
        try fleet.publish(
            "motion/fleet/control",
            Array(#"{"id":"amplify-1","command":"ping"}"#.utf8),
            responseTopic: "motion/fleet/control"
        )
        // Signed pings to adv-a asking for the answer on adv-b's desired topic and on adv-b's stream.
        for (id, responseTopic) in [
            ("redirect-desired", "motion/adv-b/desired"), ("redirect-stream", "motion/adv-b/accelerometer"),
        ] {
            try fleet.publish(
                Fleet.control("adv-a"),
                fleet.signer.signed(ControlSigner.command(id, "ping"), target: Fleet.control("adv-a")),
                responseTopic: responseTopic
            )
        }
        // An unsigned ping to the device that does not sign, answer asked on the group's control topic.
        try fleet.publish(
            Fleet.control("adv-u"),
            Array(#"{"id":"redirect-group","command":"ping"}"#.utf8),
            responseTopic: "motion/group/lab/control"
        )
        // After a ping answered by each device, everything they published in between has reached the observer.
        for device in Fleet.devices { try fleet.expectAnswers(device, "after the redirections") }
        for device in Fleet.devices {
            fleet.expectLog(
                device,
                "outside the operators' reply namespace",
                "a response topic outside motion-ctl/<client>/reply sent to \(device)"
            )
        }
        fleet.expectLog("adv-a", "asked for its answer on motion/adv-b/desired", "redirect-desired")
        for (device, id) in [
            ("adv-a", "amplify-1"), ("adv-b", "amplify-1"), ("adv-u", "amplify-1"), ("adv-a", "redirect-desired"),
            ("adv-a", "redirect-stream"), ("adv-u", "redirect-group"),
        ] {
            #expect(fleet.replies(on: Fleet.reply(device), id: id).count == 1, "\(device)'s answer to \(id)")
        }
        #expect(
            fleet.replies(on: Fleet.reply("adv-u"), id: "amplify-1").first?["code"] as? Int == 200
                && fleet.replies(on: Fleet.reply("adv-a"), id: "amplify-1").first?["code"] as? Int == 401
                && fleet.replies(on: Fleet.reply("adv-b"), id: "amplify-1").first?["code"] as? Int == 401,
            "the unsigned ping is answered by the device that does not sign and refused by those that do"
        )
        #expect(counts("motion/fleet/control") == fleetControl + 1, "one junk publish on the fleet topic multiplied")
        #expect(counts("motion/group/lab/control") == groupControl, "a reply went to the group's control topic")
        #expect(counts("motion/adv-b/desired") == desiredB, "a reply went to adv-b's desired topic")
        let everywhere = observer.messages.filter {
            ["amplify-1", "redirect-desired", "redirect-stream", "redirect-group"]
                .contains(SimulatedTool.json($0)["id"] as? String ?? "")
        }
        #expect(
            Set(everywhere.map(\.topic)) == [
                Fleet.reply("adv-a"), Fleet.reply("adv-b"), Fleet.reply("adv-u"), "motion/fleet/control",
                "motion/adv-u/control",
            ] && everywhere.count == 3 + 1 + 2 + 1 + 1,
            "the redirected commands' messages: \(everywhere.map { "\($0.topic)" })"
        )
        #expect(fleet.settings("adv-b") == settingsB, "adv-b's settings changed")
        fleet.expectUndisturbed()
    }

    /// A captured signed set-rate on adv-a, for the replays below: the command's envelope as an operator account
    /// read it, once adv-a runs it.
    static func captureSetRate(_ fleet: Fleet, id: String) throws -> [UInt8] {
        let seen = fleet.observer.messages(on: Fleet.control("adv-a")).count
        let setRate = try fleet.ctl(
            "adv-a",
            id,
            "set-rate",
            [("stream", .string("accelerometer")), ("rate_hz", .number("5"))]
        )
        #expect(setRate.map(\.code) == [200], "\(setRate)")
        let captured = try #require(fleet.observer.messages(on: Fleet.control("adv-a")).dropFirst(seen).first?.payload)
        #expect(
            fleet.observer.waitUntil(timeout: 20) {
                fleet.settings("adv-a")["streams.accelerometer.rate_hz"]?.hasPrefix("5 ") == true
            }
        )
        return captured
    }

    /// Unsigned junk, envelopes with bad signatures, moved envelopes and non-JSON (200 a second), then a captured
    /// signed command replayed (500 a second), from an operator account while the operator sends signed commands:
    /// every signed command is answered (the door keeps a separate, small budget for refusals of what it could
    /// not verify — replays draw on it too — and answers at most that many: burst 5, then 2 a second).
    @Test func junkAndReplaysCannotCrowdOutSignedCommands() throws {
        let fleet = try Fleet()
        let world = fleet.world
        let captured = try Self.captureSetRate(fleet, id: "captured-1")
        let flooder = try SimulatedTool(world, clientID: "flooder")
        let target = Fleet.control("adv-a")
        let forged = ControlSigner(key: ControlScenario.impostorKey, clock: world.clock).signed(
            ControlSigner.command("junk-forged", "stop", [("stream", .string("accelerometer"))]),
            target: target
        )
        let moved = fleet.signer.signed(ControlSigner.command("junk-moved", "stop"), target: Fleet.control("adv-b"))
        let junk: [(Int) -> [UInt8]] = [
            { Array(#"{"id":"junk-\#($0)","command":"stop","stream":"accelerometer"}"#.utf8) },
            { _ in forged },
            { _ in moved },
            { Array("\u{1B}[2J not JSON \($0)".utf8) },
        ]
        // Junk at 200 a second, replays at 500. `answered`: the fewest refusals answered — the junk's take the
        // refusals' burst; a replay of a command the door ran lately draws on the budget but is not answered (as a
        // QoS 1 redelivery is not).
        let floods: [(name: String, payload: (Int) -> [UInt8], interval: Double, logged: String, answered: Int)] = [
            ("junk", { junk[$0 % junk.count]($0) }, 0.005, "refused without an answer", 5),
            ("replays of a captured command", { _ in captured }, 0.002, "arrived again with the same counter", 0),
        ]
        for (name, payload, interval, logged, answered) in floods {
            let repliesBefore = fleet.observer.messages(on: Fleet.reply("adv-a")).count
            let started = world.now
            var sent = 0
            var stop = false
            // At least 600 messages (QoS 0), and on until the operator's commands are through; five at a time
            // (the rate is the same, the world takes a fifth of the steps).
            func next(_ world: SimulationWorld) {
                guard !stop || sent < 600 else { return }
                for _ in 0..<5 {
                    _ = try? payload(sent).withUnsafeBytes {
                        try flooder.client.publish(topic: target, payload: $0, qos: 0, retain: false)
                    }
                    sent += 1
                }
                world.schedule(after: 5 * interval, next)
            }
            world.schedule(after: 5 * interval, next)
            #expect(world.run(until: { sent >= 100 }, timeout: 20), "the \(name) did not start")
            for (id, command, arguments) in [
                ("\(name)-ping", "ping", []), ("\(name)-status", "status", []),
                (
                    "\(name)-set-rate", "set-rate",
                    [("stream", StrictJSON.Value.string("accelerometer")), ("rate_hz", .number("10"))]
                ),
                ("\(name)-ping-2", "ping", []),
            ] as [(String, String, [(String, StrictJSON.Value)])] {
                let replies = try fleet.ctl("adv-a", id, command, arguments)
                #expect(
                    replies.count == 1 && replies.first?.ok == true && replies.first?.code == 200,
                    "during the \(name): the signed \(command) got \(replies)"
                )
            }
            stop = true
            #expect(world.run(until: { sent >= 600 }, timeout: 20), "the \(name) did not end")
            // Replies published after the flood's last message reach the observer before this ping's.
            try fleet.expectAnswers("adv-a", "after the \(name)")
            let seconds = world.now - started
            let refusals = fleet.observer.json(on: Fleet.reply("adv-a")).dropFirst(repliesBefore).filter {
                $0["ok"] as? Bool == false
            }
            // The door answers at most its refusal budget (burst 5, then 2 a second), whatever was sent.
            let budget = 5 + Int((2 * seconds).rounded(.up)) + 1
            #expect(
                refusals.count >= answered && refusals.count <= budget,
                "\(refusals.count) refusals answered for \(sent) \(name) in \(seconds) s (budget \(budget))"
            )
            #expect(refusals.allSatisfy { $0["code"] as? Int != 429 }, "a rate-limit refusal during the \(name)")
            fleet.expectLog("adv-a", logged, "the \(name)")
        }
        #expect(
            fleet.observer.waitUntil(timeout: 20) {
                fleet.settings("adv-a")["streams.accelerometer.rate_hz"]?.hasPrefix("10 ") == true
            },
            "adv-a's status at 10 Hz"
        )
        fleet.expectUndisturbed()
    }

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
    @Test func yamlNeverReadsNetworkInput() throws {
        let fleet = try Fleet()
        let bomb = Array(Self.aliasBomb.utf8)
        #expect(bomb.count == 462, "the alias bomb is \(bomb.count) bytes")
        try fleet.publish("motion/adv-u/desired", bomb)
        try fleet.expectAnswers("adv-u", "right after the alias bomb on its desired topic")
        fleet.expectLog(
            "adv-u",
            "device desired state from motion/adv-u/desired refused, the previous state stays in force",
            "the alias bomb on a device that does not sign"
        )
        fleet.expectLog("adv-u", "is not valid JSON", "the alias bomb on a device that does not sign")
        try fleet.publish(Fleet.control("adv-u"), bomb)
        try fleet.expectAnswers("adv-u", "right after the alias bomb on its control topic")
        fleet.expectLog("adv-u", "control command refused (400)", "the alias bomb as a command")

        try fleet.publish("motion/adv-a/desired", bomb)
        try fleet.expectAnswers("adv-a", "right after the unsigned alias bomb")
        fleet.expectLog(
            "adv-a",
            "device desired state from motion/adv-a/desired refused, the previous state stays in force: the desired document is not signed",
            "the alias bomb on a signing device"
        )
        let key = ControlScenario.operatorKey
        let envelope = StrictJSON.Value.object([
            ("key", .string(key.id)), ("signature", .string(Base64.encode(key.signature(of: bomb)))),
            ("signed", .string(Base64.encode(bomb))),
        ]).encoded()
        try fleet.publish("motion/adv-a/desired", envelope)
        try fleet.expectAnswers("adv-a", "right after the signed alias bomb")
        fleet.expectLog("adv-a", "the signed bytes are not valid JSON", "the alias bomb signed by the operator's key")
        #expect(fleet.desired("adv-u").isEmpty)
        #expect(fleet.desired("adv-a").isEmpty)
        fleet.expectUndisturbed()
    }

    /// Publishes what `fleet set --signing-key` publishes for `layer` on `topic`: the signed document, retained.
    static func fleetSet(_ fleet: Fleet, _ json: String, layer: ConfigurationLayer, topic: String) throws {
        let payload = try #require(fleet.signer.document(json, layer: layer, topic: topic))
        try fleet.operatorTool.publish(topic, payload, retain: true)
    }

    /// On a signing device: an empty retained payload and an unsigned clear do not remove its signed layer, a
    /// signed group document moved to its device topic and a device document signed for another layer are refused,
    /// and the other device of the group keeps its settings.
    @Test func desiredDocumentsCannotBeRemovedMovedOrPlanted() throws {
        let fleet = try Fleet()
        let groupTopic = "motion/group/lab/desired"
        try Self.fleetSet(
            fleet,
            #"{"version": 1, "streams": {"gyroscope": {"rate_hz": 20}}}"#,
            layer: .group("lab"),
            topic: groupTopic
        )
        try Self.fleetSet(
            fleet,
            #"{"version": 1, "streams": {"gyroscope": {"rate_hz": 40}}}"#,
            layer: .device,
            topic: "motion/adv-a/desired"
        )
        #expect(
            fleet.observer.waitUntil(timeout: 20) {
                fleet.desired("adv-a") == ["group lab": 1, "device": 1] && fleet.desired("adv-b") == ["group lab": 1]
            },
            "adv-a running group lab v1 and device v1, adv-b group lab v1"
        )
        let settingsA = fleet.settings("adv-a")
        let settingsB = fleet.settings("adv-b")
        #expect(settingsA["streams.gyroscope.rate_hz"] == "40 (device v1)", "\(settingsA)")
        #expect(settingsB["streams.gyroscope.rate_hz"] == "20 (group lab v1)", "\(settingsB)")

        // An empty retained payload (what removed the layer before): nothing changes.
        try fleet.publish("motion/adv-a/desired", [], retain: true)
        // An unsigned clear, newer than the version in force.
        let unsigned = "refused, the previous state stays in force: the desired document is not signed"
        let unsignedBefore = fleet.log("adv-a").count(of: unsigned)
        try fleet.publish("motion/adv-a/desired", Array(#"{"version": 50, "clear": true}"#.utf8))
        // The group's signed document, moved to the devices' topics.
        let groupDocument = try #require(fleet.observer.messages(on: groupTopic).last?.payload)
        try fleet.publish("motion/adv-a/desired", groupDocument)
        try fleet.publish("motion/adv-b/desired", groupDocument)
        // A document signed for adv-a's topic but the fleet's layer.
        let otherLayer = SignedEnvelope.seal(
            [
                ("target", .string("motion/adv-a/desired")), ("layer", .string("fleet")),
                ("version", .number("60")), ("clear", .bool(true)),
            ],
            with: ControlScenario.operatorKey
        )
        try fleet.publish("motion/adv-a/desired", otherLayer)
        try fleet.expectAnswers("adv-a", "after the documents")
        try fleet.expectAnswers("adv-b", "after the documents")
        fleet.expectLog(
            "adv-a",
            "an empty retained payload on motion/adv-a/desired leaves the device layer as it is",
            "an empty retained payload on a signed layer"
        )
        #expect(fleet.log("adv-a").count(of: unsigned) == unsignedBefore + 1, "adv-a refusing the unsigned clear")
        fleet.expectLog(
            "adv-a",
            "was signed for motion/group/lab/desired and arrived on motion/adv-a/desired",
            "the group's document moved to a device topic"
        )
        fleet.expectLog(
            "adv-b",
            "was signed for motion/group/lab/desired and arrived on motion/adv-b/desired",
            "the group's document moved to a device topic"
        )
        fleet.expectLog(
            "adv-a",
            "was signed for the layer fleet and arrived for the device layer",
            "a document signed for another layer"
        )
        #expect(
            fleet.observer.waitUntil(timeout: 20) {
                fleet.observer.status("adv-a")?.configuration?.refused?.reason.contains("layer fleet") == true
            },
            "adv-a's status reporting the last refusal: \(String(describing: fleet.observer.status("adv-a")?.configuration?.refused))"
        )
        #expect(fleet.desired("adv-a") == ["group lab": 1, "device": 1])
        #expect(fleet.settings("adv-a") == settingsA, "adv-a's settings changed")
        #expect(fleet.settings("adv-b") == settingsB, "adv-b's settings changed")
        fleet.expectUndisturbed()
    }

    /// adv-a stopped, its kept device document altered in the state directory, started again: the altered
    /// document is refused at load (with the file named) and never applied; the signed command captured before
    /// the restart, replayed, is refused (the counters are kept), and so is its counter under a new id.
    @Test func theKeptStateHoldsAcrossARestart() throws {
        let fleet = try Fleet()
        let observer = fleet.observer
        let agent = fleet.agent("adv-a")
        // A signed device document adv-a keeps, then its retained copy removed (adv-a keeps the layer).
        try Self.fleetSet(
            fleet,
            #"{"version": 1, "streams": {"gyroscope": {"rate_hz": 40}}}"#,
            layer: .device,
            topic: "motion/adv-a/desired"
        )
        #expect(observer.waitUntil(timeout: 20) { fleet.desired("adv-a") == ["device": 1] })
        try fleet.publish("motion/adv-a/desired", [], retain: true)
        // A signed set-rate 5 captured, then the rate set back to 10 by the operator.
        let captured = try Self.captureSetRate(fleet, id: "captured-1")
        let back = try fleet.ctl(
            "adv-a",
            "back-to-10",
            "set-rate",
            [("stream", .string("accelerometer")), ("rate_hz", .number("10"))]
        )
        #expect(back.map(\.code) == [200], "\(back)")

        fleet.world.terminate(agent)
        #expect(ControlScenario.waitForExit(fleet.world, agent), "adv-a stopped")
        let envelope = try #require(agent.disk.file(.desiredDocument("device")))
        let members = try #require(ControlSigner.signedObject(envelope))
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
        try agent.disk.directory().replace(.desiredDocument("device"), with: tampered)

        let statuses = observer.messages(on: "motion/adv-a/status").count
        fleet.restarts["adv-a"] = 1
        fleet.world.start(agent)
        #expect(
            observer.waitUntil(timeout: 30) {
                observer.json(on: "motion/adv-a/status").dropFirst(statuses).contains {
                    $0["state"] as? String == "online"
                }
            },
            "adv-a online again"
        )
        fleet.expectLog("adv-a", "device.json: the signature does not match", "the kept envelope altered")
        fleet.expectLog(
            "adv-a",
            "the device layer is left out until its next desired document arrives",
            "the kept envelope altered"
        )

        // The captured command, and its counter under a new id.
        try fleet.publish(Fleet.control("adv-a"), captured)
        let capturedMembers = try #require(ControlSigner.signedObject(captured))
        let counter = try #require(capturedMembers.first { $0.key == "counter" }?.value.integer)
        try fleet.publish(
            Fleet.control("adv-a"),
            fleet.signer.signed(
                ControlSigner.command(
                    "same-counter",
                    "set-rate",
                    [("stream", .string("accelerometer")), ("rate_hz", .number("5"))]
                ),
                target: Fleet.control("adv-a"),
                counter: counter
            )
        )
        try fleet.expectAnswers("adv-a", "after the restart")
        fleet.expectLog(
            "adv-a",
            "was used already: a replayed command is refused",
            "the captured command replayed after a restart"
        )
        for id in ["captured-1", "same-counter"] {
            let last = fleet.replies(on: Fleet.reply("adv-a"), id: id).last
            #expect(
                last?["code"] as? Int == 401 && (last?["message"] as? String)?.contains("was used already") == true,
                "\(id) after the restart: \(String(describing: last))"
            )
        }
        #expect(
            fleet.desired("adv-a")["device"] == nil,
            "the altered kept document was applied: \(fleet.desired("adv-a"))"
        )
        let rates = observer.messages(on: "motion/adv-a/configuration").compactMap {
            (try? JSONDecoder().decode(ConfigurationStatus.self, from: Data($0.payload)))?.settings[
                "streams.gyroscope.rate_hz"
            ].map { "\($0.value) (\($0.source))" }
        }
        #expect(!rates.isEmpty && !rates.contains { $0.hasPrefix("7 ") }, "the altered rate appeared: \(rates)")
        #expect(fleet.settings("adv-a")["streams.accelerometer.rate_hz"]?.hasPrefix("10 ") == true)
        fleet.expectUndisturbed()
    }

    /// `fleet set --signing-key --group lab` as the tool decides it — `DesiredEditPlanner` given what the tool
    /// reads: the retained document opened with the devices' own verification, the versions the group's devices
    /// report — then published retained. The version published, or why the tool refuses (the CLI's reading of the
    /// broker stays end to end: DesiredStateEndToEndTests).
    static func groupSet(
        _ fleet: Fleet,
        _ settings: [String: String]? = nil,
        replace: Bool = false
    ) throws -> Result<Int, DesiredEditError> {
        let topic = "motion/group/lab/desired"
        var retained: DesiredDocument?
        var unreadable: [String: String] = [:]
        if let payload = fleet.observer.retained(topic), !payload.isEmpty {
            switch DesiredDocumentOpener(keys: ControlScenario.trust).open(payload, layer: .group("lab"), topic: topic)
            {
            case .success(let document): retained = document
            case .failure(let refusal): unreadable["broker"] = refusal.reason
            }
        }
        var reported: [String: Int] = [:]
        for device in ["adv-a", "adv-b"] {
            if let version = fleet.desired(device)["group lab"] { reported[device] = version }
        }
        let planner = DesiredEditPlanner(
            layer: .group("lab"),
            topic: topic,
            signingKey: ControlScenario.operatorKey,
            replace: replace
        )
        let edit: DesiredEditPlanner.Edit
        do {
            edit = try planner.plan(
                settings.map { DesiredEditPlanner.Change.set($0, unset: []) } ?? .clear,
                retained: retained,
                unreadable: unreadable,
                reported: reported
            )
        } catch {
            return .failure(error)
        }
        try fleet.operatorTool.publish(topic, edit.payload, retain: true)
        return .success(edit.document.version)
    }

    /// The group's documents: an older signed one replayed after a newer one and after a signed clear is
    /// ignored; an old signed document retained again (a replay an operator account can make) and a planted
    /// unsigned one with a version near 2⁵³ are not built upon by `fleet set --signing-key` (which says why), and
    /// `--replace` publishes a fresh document above every version the devices run.
    @Test func documentsCannotBeRolledBackOrFrozen() throws {
        let fleet = try Fleet()
        let topic = "motion/group/lab/desired"
        let group = ["adv-a", "adv-b"]
        func bothRun(_ version: Int, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(
                fleet.observer.waitUntil(timeout: 20) {
                    group.allSatisfy { fleet.desired($0)["group lab"] == version }
                },
                "\(what): \(group.map { fleet.desired($0) })",
                sourceLocation: sourceLocation
            )
        }
        func refusal(_ result: Result<Int, DesiredEditError>) -> String {
            guard case .failure(let error) = result else { return "published v\((try? result.get()) ?? 0)" }
            return error.description
        }
        #expect(try Self.groupSet(fleet, ["streams.gyroscope.rate_hz": "20"]).get() == 1)
        bothRun(1, "group lab v1 on both devices")
        let v1 = try #require(fleet.observer.messages(on: topic).last?.payload)
        #expect(try Self.groupSet(fleet, ["streams.gyroscope.rate_hz": "25"]).get() == 2)
        bothRun(2, "group lab v2 on both devices")
        let v2 = try #require(fleet.observer.messages(on: topic).last?.payload)
        try fleet.publish(topic, v1)
        for device in group {
            try fleet.expectAnswers(device, "after v1 replayed")
            fleet.expectLog(device, "v1 is older than v2 in force: ignored", "v1 after v2")
        }
        #expect(try Self.groupSet(fleet).get() == 3, "the group's clear")
        bothRun(3, "the group's clear (v3) on both devices")
        // The old v2, retained again: every device ignores it…
        try fleet.publish(topic, v2, retain: true)
        for device in group {
            try fleet.expectAnswers(device, "after v2 retained again")
            fleet.expectLog(device, "v2 is older than v3 in force: ignored", "v2 after the clear")
        }
        #expect(
            fleet.settings("adv-b")["streams.gyroscope.rate_hz"]?.hasSuffix("(config.yaml)") == true,
            "the cleared group's rate came back"
        )
        // …and the operator's next edit does not build on it (it would sign v2's settings again as v3).
        let onReplay = refusal(try Self.groupSet(fleet, ["streams.gyroscope.rate_hz": "30"]))
        #expect(onReplay.contains("--replace"), "fleet set built on a replayed older document: \(onReplay)")
        #expect(try Self.groupSet(fleet, ["streams.gyroscope.rate_hz": "30"], replace: true).get() == 4)
        bothRun(4, "the fresh v4 on both devices")

        // A planted unsigned document whose version would freeze the layer.
        let planted = #"{"version": 9007199254740991, "streams": {"accelerometer": {"enabled": false}}}"#
        try fleet.publish(topic, Array(planted.utf8), retain: true)
        for device in group {
            try fleet.expectAnswers(device, "after the planted document")
            fleet.expectLog(
                device,
                "group lab desired state from motion/group/lab/desired refused, the previous state stays in force: the desired document is not signed",
                "a planted unsigned document"
            )
        }
        let onPlanted = refusal(try Self.groupSet(fleet, ["streams.gyroscope.rate_hz": "35"]))
        #expect(onPlanted.contains("is not one to build on"), "fleet set built on the planted document: \(onPlanted)")
        #expect(try Self.groupSet(fleet, ["streams.gyroscope.rate_hz": "35"], replace: true).get() == 5)
        bothRun(5, "the fresh v5 on both devices")
        for device in group {
            let settings = fleet.settings(device)
            #expect(settings["streams.gyroscope.rate_hz"] == "35 (group lab v5)", "\(device): \(settings)")
            #expect(settings["streams.accelerometer.enabled"] == "true (config.yaml)", "\(device): \(settings)")
        }
        fleet.expectUndisturbed()
    }
}
