import AgentConfig
import AgentControl
import AgentPorts
import Foundation
import Logging
import MotionWire
import Synchronization
import Testing

/// A refused or stale desired document is reported by republishing the status — within the door's budget for
/// refusals, so junk or replays on a desired topic (the fleet's reaches every device at once) do not become a
/// status per message from each device; an applied document is always reported.
@Suite struct DesiredRefusalBudgetTests {
    @Test func refusedDocumentsRepublishTheStatusOnlyWithinTheRefusalBudget() throws {
        let source = try stillReplaySource("budget")
        let reconciler = testReconciler()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let controller = try startedController(source: source, configuration: { reconciler.effective }, logger: logger)
        var settings = ControlPlane.Settings()
        settings.refusalsPerSecond = 2
        settings.refusalBurst = 5
        let topics = TopicScheme(root: "motion/dev1")
        // The clock stands still (until the end): the budget does not refill.
        let now = Mutex<Double>(1_763_700_000)
        let plane = ControlPlane(
            controller: controller,
            reconciler: reconciler,
            desiredTopics: [TopicScheme.fleetDesired: .fleet],
            topics: topics,
            deviceID: "dev1",
            settings: settings,
            clock: { now.withLock { $0 } },
            statusDocument: { controller.status(state: .online, reason: nil, bootCount: 1) },
            logger: logger
        )
        func offer(_ text: String) -> Bool {
            plane.receiveDesired(
                InboundMessage(topic: TopicScheme.fleetDesired, payload: Array(text.utf8), qos: 1, retain: false)
            )
        }
        let junk = (0..<50).map { offer(#"{"version": \#($0 + 1), "streams": {"nonsense-\#($0)": {}}}"#) }
        #expect(junk.filter { $0 } == Array(repeating: true, count: 5), "the burst, then no republication")
        #expect(
            plane.configurationStatus(notes: [:]).refused?.reason.contains("nonsense-49") == true,
            "the status still carries the last one"
        )
        #expect(offer(#"{"version": 7, "streams": {"gyroscope": {"rate_hz": 25}}}"#), "an applied document is reported")
        #expect(!offer(#"{"version": 3, "streams": {"gyroscope": {"rate_hz": 10}}}"#), "a stale one, beyond the budget")
        #expect(plane.configurationStatus(notes: [:]).settings["streams.gyroscope.rate_hz"]?.value == "25")
        // The held-back report of the stale one is owed: due once, when the budget has a token again.
        #expect(plane.settleOwedStatus() == .held, "no token yet")
        now.withLock { $0 += 1 }
        #expect(plane.settleOwedStatus() == .due, "the owed status, once the budget refilled")
        #expect(plane.settleOwedStatus() == .none, "and only once: nothing is owed after it")
        #expect(plane.configurationStatus(notes: [:]).ignored?.version == 3, "the status it sends tells of v3")
    }
}
