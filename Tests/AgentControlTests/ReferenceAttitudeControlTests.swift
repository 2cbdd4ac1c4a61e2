import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionModel
import MotionWire
import Platform
import Testing

/// `set-reference-attitude` and `clear-reference-attitude` through the control door, the desired layers'
/// per-key rules for `streams.device-motion.reference_attitude`, and what the state directory keeps.
@Suite struct ReferenceAttitudeControlTests {
    struct Fixture {
        let controller: AgentController
        let plane: ControlPlane
        let hub: SensorHub
    }

    static let topics = TopicScheme(root: "motion/dev1")
    private let key = "streams.device-motion.reference_attitude"

    private func fixture(stateDirectory: String? = nil) throws -> Fixture {
        let source = try stillReplaySource("reference")
        let hub = SensorHub(outbox: Outbox())
        let reconciler = testReconciler(stateDirectory: stateDirectory)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let controller = try startedController(
            source: source,
            configuration: { reconciler.effective },
            hub: hub,
            referenceAttitudeStore: stateDirectory.map {
                ReferenceAttitudeStore(state: StateFiles(path: $0), logger: logger)
            },
            logger: logger
        )
        let plane = ControlPlane(
            controller: controller,
            reconciler: reconciler,
            desiredTopics: [TopicScheme.fleetDesired: .fleet],
            topics: Self.topics,
            deviceID: "dev1",
            statusDocument: { controller.status(state: .online, reason: nil, bootCount: 1) },
            logger: logger
        )
        return Fixture(controller: controller, plane: plane, hub: hub)
    }

    private func stateDirectory() -> String {
        NSTemporaryDirectory() + "reference-\(UUID().uuidString)"
    }

    private func command(_ plane: ControlPlane, _ text: String) throws -> (code: Int, reply: [String: Any]) {
        let outcome = try #require(
            plane.handle(
                InboundMessage(
                    topic: "motion/dev1/control",
                    payload: Array(text.utf8),
                    qos: 1,
                    retain: false,
                    responseTopic: nil,
                    correlationData: nil
                )
            ),
            "every command gets a reply"
        )
        let reply = try #require(try JSONSerialization.jsonObject(with: Data(outcome.payload)) as? [String: Any])
        return (try #require(reply["code"] as? Int), reply)
    }

    private func fleetDocument(_ plane: ControlPlane, _ json: String) {
        _ = plane.receiveDesired(
            InboundMessage(
                topic: TopicScheme.fleetDesired,
                payload: Array(json.utf8),
                qos: 1,
                retain: true,
                responseTopic: nil,
                correlationData: nil
            )
        )
    }

    /// Feeds device motion a device lying still, face up, so it has a current attitude to capture.
    private func feedStill(_ hub: SensorHub, seconds: Double = 0.5) {
        for i in 0..<Int(seconds * 100) {
            hub.ingest(
                IMUSample(
                    timestamp: Double(i) / 100,
                    acceleration: Vector3(0, 0, -1),
                    rotationRate: Vector3(0, 0, 0),
                    magneticField: Vector3(20, 0, -40)
                )
            )
        }
    }

    @Test func aGivenQuaternionIsNormalisedAppliedAndAnsweredWithTheStreamsState() throws {
        let f = try fixture()
        let before = Date().timeIntervalSince1970
        let (code, reply) = try command(
            f.plane,
            #"{"id":"r1","command":"set-reference-attitude","w":2,"x":0,"y":0,"z":2}"#
        )
        #expect(code == 200, "\(reply)")
        let result = try #require(reply["result"] as? [String: Any])
        let reference = try #require(result["referenceAttitude"] as? [String: Any])
        let q = try #require(reference["quaternion"] as? [String: Double])
        #expect(abs(q["w"]! - 0.5.squareRoot()) < 1e-12 && abs(q["z"]! - 0.5.squareRoot()) < 1e-12)
        let time = try #require(reference["time"] as? Double)
        #expect(time >= before && time <= Date().timeIntervalSince1970)
        #expect(result["referenceFrame"] as? String == "xArbitraryZVertical")
        let inForce = try #require(f.controller.referenceAttitude)
        #expect(inForce.quaternion.angle(to: Quaternion(w: 1, x: 0, y: 0, z: 1).normalized) < 1e-12)
        let setting = f.plane.configurationStatus(notes: [:]).settings[key]
        #expect(setting?.source.hasPrefix("command r1 at ") == true)
        #expect(
            setting?.value.hasPrefix("w=0.70710678118654") == true && setting?.value.contains(" x=0 y=0 z=0.7") == true
        )
    }

    @Test func withoutAQuaternionTheCurrentAttitudeIsCaptured() throws {
        let f = try fixture()
        feedStill(f.hub)
        let current = try #require(f.controller.withDeviceMotion { $0.latestAttitude } ?? nil)
        let (code, reply) = try command(f.plane, #"{"id":"c1","command":"set-reference-attitude"}"#)
        #expect(code == 200, "\(reply)")
        let reference = try #require(f.controller.referenceAttitude)
        #expect(reference.quaternion.angle(to: current) < 1e-12)
        // Still in the reference pose: the relative attitude is the identity.
        #expect(reference.relative(current).quaternion.angle(to: .identity) < 1e-9)
    }

    @Test(arguments: [
        (#"{"id":"b1","command":"set-reference-attitude","w":1,"x":0}"#, 400, "lacks \"y\", \"z\""),
        (#"{"id":"b2","command":"set-reference-attitude","w":0,"x":0,"y":0,"z":0}"#, 400, "too close to 0"),
        (#"{"id":"b3","command":"set-reference-attitude","w":"one","x":0,"y":0,"z":0}"#, 400, "\"w\" must be a number"),
        (#"{"id":"b4","command":"set-reference-attitude","quaternion":[1,0,0,0]}"#, 400, "quaternion"),
        (#"{"id":"b5","command":"clear-reference-attitude","w":1}"#, 400, "\"w\""),
    ])
    func badArgumentsAreRefusedAndChangeNothing(text: String, expected: Int, fragment: String) throws {
        let f = try fixture()
        let (code, reply) = try command(f.plane, text)
        #expect(code == expected, "\(reply)")
        let error = try #require(reply["message"] as? String)
        #expect(error.contains(fragment), "\(error)")
        #expect(f.controller.referenceAttitude == nil)
    }

    @Test func capturingWhileDeviceMotionIsStoppedIsAConflictThatSaysHowToFixIt() throws {
        let f = try fixture()
        feedStill(f.hub)
        #expect(try command(f.plane, #"{"id":"s1","command":"stop","stream":"device-motion"}"#).code == 200)
        let (code, reply) = try command(f.plane, #"{"id":"s2","command":"set-reference-attitude"}"#)
        #expect(code == 409)
        let error = try #require(reply["message"] as? String)
        #expect(error.contains("start stream=device-motion") && error.contains("w, x, y and z"), "\(error)")
        #expect(f.controller.referenceAttitude == nil)
    }

    @Test func clearRemovesTheReference() throws {
        let f = try fixture()
        _ = try command(f.plane, #"{"id":"r1","command":"set-reference-attitude","w":1,"x":0,"y":0,"z":0}"#)
        #expect(f.controller.referenceAttitude != nil)
        let (code, reply) = try command(f.plane, #"{"id":"r2","command":"clear-reference-attitude"}"#)
        #expect(code == 200, "\(reply)")
        let result = try #require(reply["result"] as? [String: Any])
        #expect(result["referenceAttitude"] == nil)
        #expect(f.controller.referenceAttitude == nil)
        let status = f.controller.status(state: .online, reason: nil, bootCount: 1)
        #expect(status.streams?["device-motion"]?.referenceAttitude == nil)
        #expect(f.plane.configurationStatus(notes: [:]).settings[key]?.value == "none")
    }

    @Test func theReferenceAndItsCaptureTimeSurviveARestart() throws {
        let directory = stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try fixture(stateDirectory: directory)
        feedStill(first.hub)
        #expect(try command(first.plane, #"{"id":"k1","command":"set-reference-attitude"}"#).code == 200)
        let kept = try #require(first.controller.referenceAttitude)
        #expect(FileManager.default.fileExists(atPath: directory + "/reference-attitude.json"))

        let second = try fixture(stateDirectory: directory)
        let restored = try #require(second.controller.referenceAttitude)
        #expect(restored.quaternion.angle(to: kept.quaternion) < 1e-12)
        #expect(restored.time == kept.time, "the capture time, not the restart's")
        let status = second.controller.status(state: .online, reason: nil, bootCount: 2)
        #expect(status.streams?["device-motion"]?.referenceAttitude?.time == kept.time)

        #expect(try command(second.plane, #"{"id":"k2","command":"clear-reference-attitude"}"#).code == 200)
        #expect(!FileManager.default.fileExists(atPath: directory + "/reference-attitude.json"))
        let third = try fixture(stateDirectory: directory)
        #expect(third.controller.referenceAttitude == nil)
    }

    @Test func desiredDocumentsAndCommandsFollowThePerKeyOverrideRules() throws {
        let f = try fixture()
        let a = "w=1 x=0 y=0 z=1"
        let h = 0.5.squareRoot()
        fleetDocument(f.plane, #"{"version": 1, "streams": {"device-motion": {"reference_attitude": "\#(a)"}}}"#)
        let fromFleet = try #require(f.controller.referenceAttitude)
        #expect(fromFleet.quaternion.angle(to: Quaternion(w: h, x: 0, y: 0, z: h)) < 1e-12)
        #expect(f.plane.configurationStatus(notes: [:]).settings[key]?.source == "fleet v1")

        // A command clears it on top of the fleet's value…
        #expect(try command(f.plane, #"{"id":"o1","command":"clear-reference-attitude"}"#).code == 200)
        #expect(f.controller.referenceAttitude == nil)
        // …and holds while the fleet's documents leave the key's value as it was…
        fleetDocument(
            f.plane,
            #"{"version": 2, "streams": {"device-motion": {"reference_attitude": "\#(a)"}}, "metrics": {"interval_s": 30}}"#
        )
        #expect(f.controller.referenceAttitude == nil)
        // …until a newer document changes it.
        fleetDocument(
            f.plane,
            #"{"version": 3, "streams": {"device-motion": {"reference_attitude": "w=0 x=1 y=0 z=0"}}}"#
        )
        let superseding = try #require(f.controller.referenceAttitude)
        #expect(superseding.quaternion.angle(to: Quaternion(w: 0, x: 1, y: 0, z: 0)) < 1e-12)
        #expect(f.plane.configurationStatus(notes: [:]).settings[key]?.source == "fleet v3")

        // A document whose reference is refused by the schema is refused whole; the reference stays.
        fleetDocument(
            f.plane,
            #"{"version": 4, "streams": {"device-motion": {"reference_attitude": "w=0 x=0 y=0 z=0"}}}"#
        )
        #expect(f.controller.referenceAttitude?.quaternion.angle(to: Quaternion(w: 0, x: 1, y: 0, z: 0)) ?? 1 < 1e-12)
        #expect(f.plane.configurationStatus(notes: [:]).refused?.reason.contains("too close to 0") == true)
    }
}
