import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionWire
import Synchronization
import Testing

/// After each subscription the agent publishes a probe and reads it back: a layer it kept from an earlier
/// connection whose retained document did not arrive before the probe was cleared while the device was away.
@Suite struct DesiredSnapshotTests {
    /// Inbound messages the test says were dropped.
    final class DropCounter: Sendable {
        private let count = Atomic<UInt64>(0)
        func drop() { count.add(1, ordering: .relaxed) }
        var value: UInt64 { count.load(ordering: .relaxed) }
    }

    struct Fixture {
        let plane: ControlPlane
        let dropped: DropCounter
    }

    static let topics = TopicScheme(root: "motion/dev1")

    private func fixture(stateDirectory: String) throws -> Fixture {
        let source = try stillReplaySource("snapshot")
        let reconciler = testReconciler(stateDirectory: stateDirectory)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let controller = try startedController(source: source, configuration: { reconciler.effective }, logger: logger)
        let dropped = DropCounter()
        let plane = ControlPlane(
            controller: controller,
            reconciler: reconciler,
            desiredTopics: [
                Self.topics.desired: .device, TopicScheme.fleetDesired: .fleet,
                TopicScheme.groupDesired("lab"): .group("lab"),
            ],
            topics: Self.topics,
            deviceID: "dev1",
            statusDocument: { controller.status(state: .online, reason: nil, bootCount: 1) },
            inboundDropped: { [dropped] in dropped.value },
            logger: logger
        )
        return Fixture(plane: plane, dropped: dropped)
    }

    private func stateDirectory() -> String {
        NSTemporaryDirectory() + "snapshot-\(UUID().uuidString)"
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

    private func probe(_ barrier: SubscriptionBarrier) -> InboundMessage {
        InboundMessage(
            topic: barrier.topic,
            payload: barrier.token,
            qos: 1,
            retain: false,
            responseTopic: nil,
            correlationData: nil
        )
    }

    private func desired(_ plane: ControlPlane) -> [String: Int] {
        plane.configurationStatus(notes: [:]).desired
    }

    private static let fleetV1 = #"{"version": 1, "streams": {"gyroscope": {"rate_hz": 25}}}"#
    private static let deviceV3 = #"{"version": 3, "streams": {"accelerometer": {"rate_hz": 20}}}"#

    @Test func aKeptLayerTheBrokerNoLongerRetainsIsRemovedWhenTheProbeReturns() throws {
        let directory = stateDirectory()
        let f = try fixture(stateDirectory: directory)
        #expect(f.plane.carriesDesiredState(Self.topics.desiredProbe))
        #expect(f.plane.receiveDesired(retained(TopicScheme.fleetDesired, Self.fleetV1)))
        #expect(f.plane.receiveDesired(retained(Self.topics.desired, Self.deviceV3)))
        #expect(desired(f.plane) == ["fleet": 1, "device": 3])

        // The next connection: only the device's document is still retained.
        let token = f.plane.beginDesiredSnapshot()
        #expect(!f.plane.receiveDesired(retained(Self.topics.desired, Self.deviceV3)), "the same document again")
        #expect(f.plane.receiveDesired(probe(token)), "the fleet layer's removal changes the status")
        #expect(desired(f.plane) == ["device": 3])
        let gyroscope = f.plane.configurationStatus(notes: [:]).settings["streams.gyroscope.rate_hz"]
        #expect(gyroscope?.source == "config.yaml")

        // What the state directory keeps agrees: a restart does not bring the cleared layer back.
        let restarted = try fixture(stateDirectory: directory)
        #expect(desired(restarted.plane) == ["device": 3])
    }

    @Test func everyLayerThatArrivedBeforeTheProbeIsKept() throws {
        let f = try fixture(stateDirectory: stateDirectory())
        _ = f.plane.receiveDesired(retained(TopicScheme.fleetDesired, Self.fleetV1))
        let token = f.plane.beginDesiredSnapshot()
        _ = f.plane.receiveDesired(retained(TopicScheme.fleetDesired, Self.fleetV1))
        #expect(!f.plane.receiveDesired(probe(token)))
        #expect(desired(f.plane) == ["fleet": 1])
    }

    @Test func dropsWhileTheDocumentsArriveOrAnEarlierConnectionsProbeRemoveNothing() throws {
        let f = try fixture(stateDirectory: stateDirectory())
        _ = f.plane.receiveDesired(retained(TopicScheme.fleetDesired, Self.fleetV1))

        // A flood may have pushed the fleet's document out of the inbox: absent is not proof of cleared.
        let first = f.plane.beginDesiredSnapshot()
        f.dropped.drop()
        #expect(!f.plane.receiveDesired(probe(first)))
        #expect(desired(f.plane) == ["fleet": 1])

        // The probe of a connection that has since been replaced says nothing about the new subscription.
        let older = f.plane.beginDesiredSnapshot()
        _ = f.plane.beginDesiredSnapshot()
        #expect(!f.plane.receiveDesired(probe(older)))
        #expect(desired(f.plane) == ["fleet": 1])
        // Nor does a probe without a subscription in progress.
        #expect(!f.plane.receiveDesired(probe(SubscriptionBarrier(topic: Self.topics.desiredProbe))))
        #expect(desired(f.plane) == ["fleet": 1])
    }

    /// What ControlService does once a flood's drops stop: a new snapshot over a fresh SUBSCRIBE of the desired
    /// topics. It supersedes the spoiled one, and a layer that did not arrive this time is removed.
    @Test func aSnapshotAfterASpoiledOneRemovesTheClearedLayer() throws {
        let f = try fixture(stateDirectory: stateDirectory())
        _ = f.plane.receiveDesired(retained(TopicScheme.fleetDesired, Self.fleetV1))
        _ = f.plane.receiveDesired(retained(Self.topics.desired, Self.deviceV3))
        let spoiled = f.plane.beginDesiredSnapshot()
        f.dropped.drop()
        #expect(!f.plane.receiveDesired(probe(spoiled)))
        #expect(desired(f.plane) == ["fleet": 1, "device": 3])

        let again = f.plane.beginDesiredSnapshot()
        _ = f.plane.receiveDesired(retained(Self.topics.desired, Self.deviceV3))
        #expect(f.plane.receiveDesired(probe(again)))
        #expect(desired(f.plane) == ["device": 3])
    }

    @Test func anOlderDocumentIsIgnoredAndReportedInTheStatus() throws {
        let f = try fixture(stateDirectory: stateDirectory())
        _ = f.plane.receiveDesired(retained(Self.topics.desired, Self.deviceV3))
        #expect(f.plane.configurationStatus(notes: [:]).ignored == nil)
        let older = #"{"version": 2, "streams": {"accelerometer": {"rate_hz": 10}}}"#
        #expect(f.plane.receiveDesired(retained(Self.topics.desired, older)), "the status reports it")
        let status = f.plane.configurationStatus(notes: [:])
        let ignored = try #require(status.ignored)
        #expect(ignored.layer == "device")
        #expect(ignored.version == 2)
        #expect(ignored.reason.contains("older than v3"))
        #expect(status.desired == ["device": 3])
        #expect(status.settings["streams.accelerometer.rate_hz"]?.value == "20")
    }
}
