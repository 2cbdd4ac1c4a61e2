import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionModel
import MotionWire
import Recording
import Synchronization
import Testing

/// Thousands of random and mutated commands through `ControlPlane.handle`, from fixed seeds: nothing crashes,
/// every command that parses is answered exactly once, and no refused command changes the device's state.
@Suite struct ControlFuzzTests {
    /// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014): a
    /// seeded generator, so every run feeds the same inputs.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    final class ManualClock: Sendable {
        let now = Mutex<Double>(1_763_700_000)
        var value: Double { now.withLock { $0 } }
    }

    struct Fixture {
        let controller: AgentController
        let plane: ControlPlane
        let clock: ManualClock
        /// The device's state as the retained status shows it, without the moment it was taken.
        var status: AgentStatus {
            var s = controller.status(state: .online, reason: nil, bootCount: 1)
            s.time = 0
            return s
        }
    }

    static func fixture(
        keys: OperatorKeys? = nil,
        counterStore: (any StateDirectory)? = nil,
        rememberedIDs: Int = 1_000_000
    ) throws -> Fixture {
        let source = try stillReplaySource("control-fuzz")
        let topics = TopicScheme(root: "motion/dev1")
        let reconciler = testReconciler()
        let controller = try startedController(source: source, configuration: { reconciler.effective })
        let clock = ManualClock()
        var settings = ControlPlane.Settings()
        // The rate limit has its own test; here every command must reach the parser.
        settings.ratePerSecond = 1e9
        settings.burst = 1e9
        settings.refusalsPerSecond = 1e9
        settings.refusalBurst = 1e9
        settings.rememberedIDs = rememberedIDs
        settings.keys = keys
        settings.counterStore = counterStore
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let plane = ControlPlane(
            controller: controller,
            reconciler: reconciler,
            topics: topics,
            deviceID: "dev1",
            settings: settings,
            clock: { clock.value },
            statusDocument: { controller.status(state: .online, reason: nil, bootCount: 1) },
            logger: logger
        )
        return Fixture(controller: controller, plane: plane, clock: clock)
    }

    static func message(_ payload: [UInt8]) -> InboundMessage {
        InboundMessage(
            topic: "motion/dev1/control",
            payload: payload,
            qos: 1,
            retain: false,
            responseTopic: nil,
            correlationData: nil
        )
    }

    static func reply(_ outcome: ControlPlane.Outcome) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(outcome.payload)) as? [String: Any]
    }

    /// Well-formed commands of every kind, with arguments drawn at random (some out of range).
    static func validCommand(_ id: String, _ rng: inout SplitMix64) -> [String: Any] {
        let streams = StreamName.allCases.map(\.rawValue)
        let stream = streams.randomElement(using: &rng)!
        var c: [String: Any] = ["id": id]
        switch Int.random(in: 0..<10, using: &rng) {
        case 0:
            c["command"] = "start"
            c["stream"] = stream
        case 1:
            c["command"] = "stop"
            c["stream"] = stream
        case 2:
            c["command"] = "set-rate"
            c["stream"] = stream
            if Bool.random(using: &rng) {
                c["rate_hz"] = Double(Int.random(in: 1...400, using: &rng))
            } else {
                c["interval_s"] = [0.01, 0.02, 0.1, 0.5, 1][Int.random(in: 0..<5, using: &rng)]
            }
        case 3:
            c["command"] = "set-qos"
            c["stream"] = stream
            c["qos"] = Int.random(in: 0...2, using: &rng)
        case 4:
            c["command"] = "set-retain"
            c["stream"] = stream
            c["retain"] = Bool.random(using: &rng)
        case 5:
            c["command"] = "set-reference-frame"
            c["frame"] = AttitudeReferenceFrame.allCases.randomElement(using: &rng)!.rawValue
        case 6: c["command"] = "reset-pedometer"
        case 7: c["command"] = "status"
        case 8: c["command"] = "list-streams"
        default: c["command"] = "ping"
        }
        return c
    }

    static func json(_ object: [String: Any]) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    /// A value of a random JSON type, including ones no argument accepts.
    static func oddValue(_ rng: inout SplitMix64) -> Any {
        switch Int.random(in: 0..<9, using: &rng) {
        case 0: return NSNull()
        case 1: return Bool.random(using: &rng)
        case 2: return -Double.random(in: 0...1e12, using: &rng)
        case 3: return 1e300
        case 4: return String(repeating: "é", count: Int.random(in: 0...40, using: &rng))
        case 5: return [1, "two", ["three": 3]] as [Any]
        case 6: return ["nested": ["deeper": [1, 2, 3]]]
        case 7: return Int.random(in: -5...5, using: &rng)
        default: return "gyroscope"
        }
    }

    /// Mutates `bytes` at the byte level: flips, truncation, insertion, deletion, duplication and splices of
    /// invalid UTF-8.
    static func mutateBytes(_ bytes: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var b = bytes
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            switch Int.random(in: 0..<7, using: &rng) {
            case 0 where !b.isEmpty:
                b[Int.random(in: 0..<b.count, using: &rng)] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
            case 1 where !b.isEmpty: b.removeLast(Int.random(in: 1...b.count, using: &rng))
            case 2: b.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...b.count, using: &rng))
            case 3 where !b.isEmpty: b.remove(at: Int.random(in: 0..<b.count, using: &rng))
            case 4: b += b.prefix(Int.random(in: 0...b.count, using: &rng))
            case 5: b.insert(contentsOf: [0xC3, 0x28, 0xFF, 0xFE], at: Int.random(in: 0...b.count, using: &rng))
            default: b[b.isEmpty ? 0..<0 : 0..<1] = [UInt8(ascii: "[")]
            }
        }
        return b
    }

    /// Mutates a command at the JSON level: wrong types, unknown keys, missing keys, unknown commands and
    /// streams, absurd values, oversized ids.
    static func mutateObject(_ object: [String: Any], _ rng: inout SplitMix64) -> [String: Any] {
        var o = object
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: o[o.keys.sorted().randomElement(using: &rng)!] = oddValue(&rng)
        case 1: o["unexpected_\(Int.random(in: 0..<3, using: &rng))"] = oddValue(&rng)
        case 2: o.removeValue(forKey: o.keys.sorted().randomElement(using: &rng)!)
        case 3: o["command"] = ["fly", "START", "", "set_rate", "reload"].randomElement(using: &rng)!
        case 4: o["stream"] = ["thermometer", "", "accelerometer/x", "GYROSCOPE"].randomElement(using: &rng)!
        case 5: o["rate_hz"] = [0, -1, 1e6, 10_001, Double.leastNonzeroMagnitude].randomElement(using: &rng)!
        default: o["id"] = String(repeating: "x", count: 129)
        }
        return o
    }

    @Test func randomAndMutatedCommandsAreAnsweredAndInvalidOnesChangeNothing() throws {
        let f = try Self.fixture()
        var rng = SplitMix64(state: 0x5EED_0006)
        var applied: Set<String> = []
        var counts = (parsed: 0, refused: 0, duplicates: 0)
        for i in 0..<4000 {
            let id = "f\(i)"
            let payload: [UInt8]
            switch i % 4 {
            case 0: payload = Self.json(Self.validCommand(id, &rng))
            case 1: payload = Self.json(Self.mutateObject(Self.validCommand(id, &rng), &rng))
            case 2: payload = Self.mutateBytes(Self.json(Self.validCommand(id, &rng)), &rng)
            default:
                // Pure noise, sometimes beyond the size limit.
                let length = Int.random(in: 0...(i % 40 == 3 ? 9000 : 300), using: &rng)
                payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            }
            let parsed = ControlRequest.parse(payload)
            let before = f.status
            let outcome = f.plane.handle(Self.message(payload))
            if case .success(let request) = parsed {
                if applied.contains(request.id) {
                    // A repeated id (a mutation can clone one) is a redelivery: not applied, not answered.
                    #expect(
                        outcome == nil,
                        "a repeated id was answered twice: \(String(decoding: payload, as: UTF8.self))"
                    )
                    #expect(f.status == before)
                    counts.duplicates += 1
                    continue
                }
                applied.insert(request.id)
                counts.parsed += 1
                let answer = try #require(
                    outcome.flatMap(Self.reply),
                    "a parseable command went unanswered: \(String(decoding: payload, as: UTF8.self))"
                )
                #expect(answer["id"] as? String == request.id)
                if answer["ok"] as? Bool != true {
                    #expect([400, 404, 409].contains(answer["code"] as? Int), "\(answer)")
                    #expect(f.status == before, "a refused command changed the state: \(answer)")
                }
            } else {
                counts.refused += 1
                let answer = try #require(outcome.flatMap(Self.reply), "an unparseable payload went unanswered")
                #expect(answer["ok"] as? Bool == false)
                #expect([400, 404].contains(answer["code"] as? Int), "\(answer)")
                #expect(outcome?.stateChanged == false)
                #expect(f.status == before, "an invalid command changed the state: \(answer)")
            }
        }
        // The generator must exercise both sides, or the test proves nothing.
        #expect(counts.parsed > 1000 && counts.refused > 1500, "\(counts)")
    }

    @Test func mutatedSignedEnvelopesAreNeverAccepted() throws {
        let f = try Self.fixture(keys: TestOperator.trust())
        var rng = SplitMix64(state: 0x5EED_0401)
        var accepted = 0
        for i in 0..<1500 {
            var command = Self.validCommand("s\(i)", &rng)
            command["timestamp"] = f.clock.value
            guard case .object(let members) = try StrictJSON.parse(Self.json(command), limits: .command) else {
                Issue.record("the generator wrote no object")
                return
            }
            let envelope = TestOperator.signed(members, counter: Int(f.clock.value * 1e6) + i)
            let original = f.plane.handle(Self.message(envelope)).flatMap(Self.reply)
            #expect(original?["id"] as? String == "s\(i)")
            if original?["ok"] as? Bool == true { accepted += 1 }
            let before = f.status
            for _ in 0..<3 {
                var mutated = Self.mutateBytes(envelope, &rng)
                if mutated == envelope { mutated.append(UInt8(ascii: " ")) }
                let outcome = f.plane.handle(Self.message(mutated))
                let answer = outcome.flatMap(Self.reply)
                #expect(
                    answer?["ok"] as? Bool != true,
                    "a mutated envelope was accepted: \(String(decoding: mutated, as: UTF8.self))"
                )
                #expect(f.status == before)
            }
        }
        #expect(accepted > 1000, "the unmutated envelopes must be accepted: \(accepted)")
    }
}
