import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionWire
import Testing

/// A kept layer goes away only by a document that says so (`{"version": N, "clear": true}`), never because a
/// broker retains nothing for its topic: on a cluster whose nodes keep retained messages apart, absence proves
/// nothing. The clear's version is kept — across restarts too — so an older document replayed after it is
/// refused like any other.
@Suite struct ExplicitClearTests {
    static let topics = TopicScheme(root: "motion/dev1")

    private func plane(stateDirectory: String) throws -> ControlPlane {
        let source = try stillReplaySource("clear")
        let reconciler = testReconciler(stateDirectory: stateDirectory)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let controller = try startedController(source: source, configuration: { reconciler.effective }, logger: logger)
        return ControlPlane(
            controller: controller,
            reconciler: reconciler,
            desiredTopics: [Self.topics.desired: .device, TopicScheme.fleetDesired: .fleet],
            topics: Self.topics,
            deviceID: "dev1",
            statusDocument: { controller.status(state: .online, reason: nil, bootCount: 1) },
            logger: logger
        )
    }

    private func retained(_ topic: String, _ text: String) -> InboundMessage {
        InboundMessage(
            topic: topic,
            payload: Array(text.utf8),
            qos: 1,
            retain: true,
            responseTopic: nil,
            correlationData: nil
        )
    }

    private func gyroscopeRate(_ plane: ControlPlane) -> String? {
        plane.configurationStatus(notes: [:]).settings["streams.gyroscope.rate_hz"]?.value
    }

    @Test func anEmptyPayloadLeavesTheLayerAndAClearDocumentRemovesItKeepingItsVersion() throws {
        let directory = NSTemporaryDirectory() + "clear-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let f = try plane(stateDirectory: directory)
        #expect(
            f.receiveDesired(
                retained(TopicScheme.fleetDesired, #"{"version": 1, "streams": {"gyroscope": {"rate_hz": 25}}}"#)
            )
        )
        #expect(gyroscopeRate(f) == "25")

        // What a cluster node without the document, or an old tool, sends: nothing changes.
        #expect(!f.receiveDesired(retained(TopicScheme.fleetDesired, "")))
        #expect(gyroscopeRate(f) == "25")
        #expect(f.configurationStatus(notes: [:]).desired == ["fleet": 1])

        #expect(f.receiveDesired(retained(TopicScheme.fleetDesired, #"{"version": 2, "clear": true}"#)))
        #expect(gyroscopeRate(f) == "50", "config.yaml's rate again")
        #expect(f.configurationStatus(notes: [:]).desired == ["fleet": 2])

        // The document from before the clear, replayed: older than the clear, refused.
        #expect(
            f.receiveDesired(
                retained(TopicScheme.fleetDesired, #"{"version": 1, "streams": {"gyroscope": {"rate_hz": 25}}}"#)
            )
        )
        #expect(gyroscopeRate(f) == "50")
        #expect(f.configurationStatus(notes: [:]).ignored?.version == 1)

        // A restart keeps the clear, and with it the version a new document must exceed.
        let restarted = try plane(stateDirectory: directory)
        #expect(restarted.configurationStatus(notes: [:]).desired == ["fleet": 2])
        #expect(
            restarted.receiveDesired(
                retained(TopicScheme.fleetDesired, #"{"version": 1, "streams": {"gyroscope": {"rate_hz": 25}}}"#)
            )
        )
        #expect(gyroscopeRate(restarted) == "50")
        #expect(
            restarted.receiveDesired(
                retained(TopicScheme.fleetDesired, #"{"version": 3, "streams": {"gyroscope": {"rate_hz": 40}}}"#)
            )
        )
        #expect(gyroscopeRate(restarted) == "40")
    }

    @Test func aClearOfALayerNeverSeenKeepsItsVersion() throws {
        let f = try plane(stateDirectory: NSTemporaryDirectory() + "clear-\(UUID().uuidString)")
        #expect(f.receiveDesired(retained(Self.topics.desired, #"{"version": 9, "clear": true}"#)))
        #expect(f.configurationStatus(notes: [:]).desired == ["device": 9])
        #expect(
            f.receiveDesired(
                retained(Self.topics.desired, #"{"version": 4, "streams": {"gyroscope": {"rate_hz": 25}}}"#)
            )
        )
        #expect(gyroscopeRate(f) == "50")
    }

    @Test(arguments: [
        #"{"version": 5, "clear": true, "streams": {"gyroscope": {"rate_hz": 25}}}"#,
        #"{"version": 5, "clear": "yes"}"#,
        #"{"clear": true}"#,
    ])
    func aMalformedClearIsRefusedAndChangesNothing(text: String) throws {
        let f = try plane(stateDirectory: NSTemporaryDirectory() + "clear-\(UUID().uuidString)")
        #expect(
            f.receiveDesired(
                retained(TopicScheme.fleetDesired, #"{"version": 1, "streams": {"gyroscope": {"rate_hz": 25}}}"#)
            )
        )
        #expect(f.receiveDesired(retained(TopicScheme.fleetDesired, text)))
        #expect(gyroscopeRate(f) == "25")
        #expect(f.configurationStatus(notes: [:]).refused != nil)
    }
}
