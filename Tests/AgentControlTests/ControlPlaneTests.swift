import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionWire
import Platform
import Recording
import Synchronization
import Testing

@Suite struct ControlPlaneTests {
    final class ManualClock: Sendable {
        let now = Mutex<Double>(1_763_700_000)
        func advance(_ s: Double) { now.withLock { $0 += s } }
        var value: Double { now.withLock { $0 } }
    }

    struct Fixture {
        let controller: AgentController
        let plane: ControlPlane
        let clock: ManualClock
        let hub: SensorHub
    }

    private func fixture(
        settings: ControlPlane.Settings = ControlPlane.Settings(),
        stateDirectory: String? = nil
    ) throws -> Fixture {
        let source = try stillReplaySource("control")
        let hub = SensorHub(outbox: Outbox())
        let reconciler = testReconciler(stateDirectory: stateDirectory)
        let controller = try startedController(source: source, configuration: { reconciler.effective }, hub: hub)
        let clock = ManualClock()
        let plane = ControlPlane(
            controller: controller,
            reconciler: reconciler,
            topics: TopicScheme(root: "motion/dev1"),
            deviceID: "dev1",
            settings: settings,
            clock: { clock.value },
            statusDocument: { controller.status(state: .online, reason: nil, bootCount: 1) },
            logger: Logger(label: "test")
        )
        return Fixture(controller: controller, plane: plane, clock: clock, hub: hub)
    }

    private func message(_ text: String, retain: Bool = false, responseTopic: String? = nil) -> InboundMessage {
        InboundMessage(
            topic: "motion/dev1/control",
            payload: Array(text.utf8),
            qos: 1,
            retain: retain,
            responseTopic: responseTopic,
            correlationData: responseTopic == nil ? nil : [1, 2, 3]
        )
    }

    private func reply(_ outcome: ControlPlane.Outcome?) throws -> [String: Any] {
        let o = try #require(outcome)
        return try #require(try JSONSerialization.jsonObject(with: Data(o.payload)) as? [String: Any])
    }

    @Test func setRateIsClampedToTheHardwareAndAnswered() throws {
        let f = try fixture()
        let outcome = f.plane.handle(message(#"{"id":"a","command":"set-rate","stream":"gyroscope","rate_hz":500}"#))
        let r = try reply(outcome)
        #expect(r["ok"] as? Bool == true && r["code"] as? Int == 200 && r["id"] as? String == "a")
        let result = try #require(r["result"] as? [String: Any])
        #expect(result["requestedRateHz"] as? Double == 500)
        #expect(result["rateHz"] as? Double == 100)  // the recording is 100 Hz
        #expect(outcome?.stateChanged == true)
        #expect(outcome?.replyTopic == "motion/dev1/control/reply")
    }

    @Test func stopAndStartChangeTheStream() throws {
        let f = try fixture()
        _ = f.plane.handle(message(#"{"id":"s1","command":"stop","stream":"accelerometer"}"#))
        #expect(f.controller.status(state: .online, reason: nil, bootCount: 1).streams?["accelerometer"]?.rateHz == 0)
        _ = f.plane.handle(message(#"{"id":"s2","command":"start","stream":"accelerometer"}"#))
        #expect(f.controller.status(state: .online, reason: nil, bootCount: 1).streams?["accelerometer"]?.rateHz == 50)
    }

    @Test func mqtt5RepliesGoToTheResponseTopicWithTheCorrelationData() throws {
        let f = try fixture()
        let outcome = try #require(
            f.plane.handle(message(#"{"id":"v5","command":"ping"}"#, responseTopic: "motion-ctl/ops-42/reply"))
        )
        // The device's id is appended: the reply topic says who answered, and a device account can write there.
        #expect(outcome.replyTopic == "motion-ctl/ops-42/reply/dev1")
        #expect(outcome.correlationData == [1, 2, 3])
    }

    /// A response topic is where the device publishes, so whoever sends a command could aim its answers at
    /// any topic the device may write (another device's stream, a desired document): only the operator reply
    /// space is honoured; anything else gets its answer on the device's own reply topic.
    @Test(arguments: [
        "ops/replies/42", "motion/dev2/accelerometer", "motion/fleet/desired", "motion-ctl/a/b/reply",
        "motion-ctl/+/reply",
        "motion-ctl/#/reply", "motion-ctl//reply", "motion-ctl/ops/reply/extra", "$SYS/broker",
    ])
    func aResponseTopicOutsideTheReplySpaceIsNotHonoured(_ topic: String) throws {
        let f = try fixture()
        let outcome = try #require(f.plane.handle(message(#"{"id":"v5","command":"ping"}"#, responseTopic: topic)))
        #expect(outcome.replyTopic == "motion/dev1/control/reply")
    }

    @Test func retainedCommandsAreIgnored() throws {
        let f = try fixture()
        #expect(f.plane.handle(message(#"{"id":"r","command":"stop","stream":"gyroscope"}"#, retain: true)) == nil)
        #expect(f.controller.status(state: .online, reason: nil, bootCount: 1).streams?["gyroscope"]?.enabled == true)
    }

    @Test func aRedeliveredCommandIsAppliedOnce() throws {
        let f = try fixture()
        #expect(f.plane.handle(message(#"{"id":"dup","command":"stop","stream":"gyroscope"}"#)) != nil)
        _ = f.plane.handle(message(#"{"id":"other","command":"start","stream":"gyroscope"}"#))
        // The redelivery of "dup" must not stop the stream again.
        #expect(f.plane.handle(message(#"{"id":"dup","command":"stop","stream":"gyroscope"}"#)) == nil)
        #expect(f.controller.status(state: .online, reason: nil, bootCount: 1).streams?["gyroscope"]?.enabled == true)
    }

    @Test func oldCommandsAreRefused() throws {
        let f = try fixture()
        let old = f.clock.value - 3600
        let r = try reply(
            f.plane.handle(message(#"{"id":"old","command":"stop","stream":"gyroscope","timestamp":\#(old)}"#))
        )
        #expect(r["code"] as? Int == 409)
        #expect(f.controller.status(state: .online, reason: nil, bootCount: 1).streams?["gyroscope"]?.enabled == true)
    }

    @Test func theRateLimitRefusesFloodsAndRecovers() throws {
        var settings = ControlPlane.Settings()
        settings.ratePerSecond = 2
        settings.burst = 5
        let f = try fixture(settings: settings)
        var codes: [Int] = []
        for i in 0..<8 {
            codes.append(try reply(f.plane.handle(message(#"{"id":"p\#(i)","command":"ping"}"#)))["code"] as! Int)
        }
        #expect(codes == [200, 200, 200, 200, 200, 429, 429, 429])
        f.clock.advance(1)
        #expect(try reply(f.plane.handle(message(#"{"id":"late","command":"ping"}"#)))["code"] as? Int == 200)
    }

    @Test func invalidCommandsChangeNothing() throws {
        let f = try fixture()
        let before = f.controller.status(state: .online, reason: nil, bootCount: 1).streams
        for text in [
            #"{"id":"x","command":"set-rate","stream":"gyroscope","rate_hz":-1}"#, "{", #"{"id":"y","command":"nope"}"#,
        ] {
            let r = try reply(f.plane.handle(message(text)))
            #expect(r["ok"] as? Bool == false)
        }
        #expect(f.controller.status(state: .online, reason: nil, bootCount: 1).streams == before)
    }

    /// A command's settings are kept as per-key overrides in the state directory (never a snapshot of every
    /// stream): the next start runs them, and every key the command did not name follows config.yaml.
    @Test func changesPersistAcrossRestartsAsOverridesOfTheNamedKeysOnly() throws {
        let directory = NSTemporaryDirectory() + "control-state-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try fixture(stateDirectory: directory)
        _ = first.plane.handle(message(#"{"id":"p","command":"set-rate","stream":"magnetometer","rate_hz":10}"#))
        let second = try fixture(stateDirectory: directory)
        let streams = second.controller.status(state: .online, reason: nil, bootCount: 1).streams
        #expect(streams?["magnetometer"]?.requestedRateHz == 10)
        let kept = DesiredStateStore(state: StateFiles(path: directory)).load(layers: [])
        #expect(Array(kept.overrides.keys) == ["streams.magnetometer.rate_hz"])
        #expect(kept.overrides["streams.magnetometer.rate_hz"]?.commandID == "p")
        let status = second.plane.configurationStatus(notes: [:])
        #expect(status.settings["streams.magnetometer.rate_hz"]?.source.hasPrefix("command p at ") == true)
        #expect(status.settings["streams.gyroscope.rate_hz"]?.source == "config.yaml")
    }
}
