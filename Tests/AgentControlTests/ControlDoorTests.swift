import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionHistory
import MotionModel
import MotionWire
import Synchronization
import Testing

/// One serialized door: reloads and commands racing each other leave the newest plan applied last, a change
/// that changes nothing plans nothing, and the pedometer reset reaches the history through the door.
@Suite(.serialized) struct ControlDoorTests {
    /// A sensor source that only records the plans applied to it.
    final class PlanRecordingSource: SensorSource {
        let summary = "plan recorder"
        let devices = [
            SensorDevice(
                id: "imu",
                name: "imu",
                sensors: [.accelerometer, .gyroscope, .magnetometer],
                supportedRates: .range(min: 1, step: 1, max: 1000)
            )
        ]
        private let applied = Mutex<[AcquisitionPlan]>([])
        func apply(_ plan: AcquisitionPlan) throws { applied.withLock { $0.append(plan) } }
        func run(into sink: SampleSink) async throws {}
        var last: AcquisitionPlan? { applied.withLock { $0.last } }
        var count: Int { applied.withLock { $0.count } }
    }

    /// A history that counts what the controller tells it.
    final class CountingHistory: StepHistory {
        let resets = Mutex(0)
        func pedometerWasReset(now: Double) { resets.withLock { $0 += 1 } }
        func queryPedometer(from: Double, to: Double) throws(HistoryError) -> ControlResult.PedometerQuery {
            ControlResult.PedometerQuery(PedometerData(startDate: from, endDate: to, numberOfSteps: 42))
        }
        func queryActivity(from: Double, to: Double) throws(HistoryError) -> [ControlResult.ActivitySegment] { [] }
    }

    struct Fixture: Sendable {
        let source: PlanRecordingSource
        let controller: AgentController
        let reconciler: ConfigurationReconciler
        let plane: ControlPlane
    }

    private func fixture(
        history: (any StepHistory)? = nil,
        log: RecordingLogHandler? = nil,
        keys: OperatorKeys? = nil
    ) throws -> Fixture {
        let source = PlanRecordingSource()
        let topics = TopicScheme(root: "motion/dev1")
        var logger = log.map { log in Logger(label: "test") { _ in log } } ?? Logger(label: "test")
        logger.logLevel = log == nil ? .critical : .info
        let reconciler = testReconciler()
        let controller = try startedController(source: source, configuration: { reconciler.effective }, logger: logger)
        var settings = ControlPlane.Settings()
        settings.ratePerSecond = 1e9
        settings.burst = 1e9
        settings.keys = keys
        let reloads = Atomic<Int>(0)
        let plane = ControlPlane(
            controller: controller,
            history: history,
            reconciler: reconciler,
            topics: topics,
            deviceID: "dev1",
            settings: settings,
            statusDocument: { controller.status(state: .online, reason: nil, bootCount: 1) },
            reloadConfiguration: {
                // Each reload finds another gyroscope rate in the file.
                let n = reloads.add(1, ordering: .relaxed).newValue
                var configuration = AgentConfiguration()
                configuration.streams[.gyroscope]?.rateHz = Double(101 + n % 800)
                var changed: [String] = []
                _ = try reconciler.reload(configuration) { changed = try controller.apply($0) }
                return ReloadReport(changedStreams: changed, needsRestart: [])
            },
            logger: logger
        )
        return Fixture(source: source, controller: controller, reconciler: reconciler, plane: plane)
    }

    private static func message(_ text: String) -> InboundMessage {
        InboundMessage(
            topic: "motion/dev1/control",
            payload: Array(text.utf8),
            qos: 1,
            retain: false,
            responseTopic: nil,
            correlationData: nil
        )
    }

    /// The plan applied last must be the one the final settings call for: starting the pipeline again from the
    /// configuration in force, alone, applies the same plan again.
    private func expectNewestPlanAppliedLast(_ f: Fixture) throws {
        let lastApplied = try #require(f.source.last)
        let before = f.source.count
        try f.controller.start()
        #expect(f.source.count == before + 1)
        #expect(f.source.last == lastApplied, "an older plan was applied after the newest one")
    }

    /// Runs `body` for `iterations` indices on many threads at once, off Swift's cooperative pool, so other
    /// suites' tasks (starting their brokers) are not starved meanwhile.
    private func race(_ iterations: Int, _ body: @escaping @Sendable (Int) -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: iterations, execute: body)
                done.resume()
            }
        }
    }

    /// A Sparkplug host's write enters by the same door: parsed and validated like every command, applied through
    /// the configuration's layers, its source in its id; refused outright while commands must be signed.
    @Test func aCommandFromAnotherProtocolGoesThroughTheSameDoor() throws {
        let f = try fixture()
        let applied = try #require(
            f.plane.handleUnsigned(
                Array(#"{"id": "sparkplug-1", "command": "set-rate", "stream": "gyroscope", "rate_hz": 25}"#.utf8),
                source: "sparkplug"
            )
        )
        #expect(applied.ok && applied.id == "sparkplug-1", "\(applied)")
        #expect(f.controller.streamStatus(.gyroscope).requestedRateHz == 25)
        let invalid = try #require(
            f.plane.handleUnsigned(
                Array(#"{"id": "sparkplug-2", "command": "set-rate", "stream": "gyroscope", "rate_hz": -5}"#.utf8),
                source: "sparkplug"
            )
        )
        #expect(!invalid.ok && invalid.code == 400, "\(invalid)")
        #expect(f.controller.streamStatus(.gyroscope).requestedRateHz == 25)
        // A redelivery (same id) is not applied twice.
        #expect(
            f.plane.handleUnsigned(
                Array(#"{"id": "sparkplug-1", "command": "set-rate", "stream": "gyroscope", "rate_hz": 25}"#.utf8),
                source: "sparkplug"
            ) == nil
        )

        let signed = try fixture(keys: TestOperator.trust())
        let refused = try #require(
            signed.plane.handleUnsigned(
                Array(#"{"id": "sparkplug-3", "command": "set-rate", "stream": "gyroscope", "rate_hz": 25}"#.utf8),
                source: "sparkplug"
            )
        )
        #expect(!refused.ok && refused.code == 401 && refused.message.contains("no signature"), "\(refused)")
        #expect(signed.controller.streamStatus(.gyroscope).requestedRateHz != 25)
    }

    @Test func applyingTheConfigurationInForceAgainReconfiguresNothing() throws {
        let f = try fixture()
        var configuration = AgentConfiguration()
        configuration.streams[.gyroscope]?.rateHz = 250
        func reload() throws -> [String] {
            var changed: [String] = []
            _ = try f.reconciler.reload(configuration) { changed = try f.controller.apply($0) }
            return changed
        }
        #expect(try reload() == ["gyroscope"])
        let plans = f.source.count
        #expect(try reload() == [])
        #expect(f.source.count == plans, "the same configuration was planned and applied to the hardware again")
        configuration.streams[.gyroscope]?.rateHz = 200
        #expect(try reload() == ["gyroscope"])
        #expect(f.source.count == plans + 1)
    }

    @Test func reloadsAndCommandsRacingLeaveTheNewestPlanAppliedLast() async throws {
        let f = try fixture()
        let outcomes = Mutex<[ReloadOutcome]>([])
        let replies = Mutex<[Int]>([])
        await race(400) { i in
            if i % 2 == 0 {
                let outcome = f.plane.reload(trigger: .hangup)
                outcomes.withLock { $0.append(outcome) }
            } else {
                let rate = 101 + (i * 37) % 800
                let command = #"{"id":"r\#(i)","command":"set-rate","stream":"gyroscope","rate_hz":\#(rate)}"#
                let code = f.plane.handle(Self.message(command))?.reply.code ?? -1
                replies.withLock { $0.append(code) }
            }
        }
        #expect(outcomes.withLock { $0.count } == 200)
        for outcome in outcomes.withLock({ $0 }) {
            guard case .applied = outcome else {
                Issue.record("a reload was refused: \(outcome.summary)")
                continue
            }
        }
        #expect(replies.withLock { $0 }.allSatisfy { $0 == 200 })
        #expect(replies.withLock { $0.count } == 200)
        try expectNewestPlanAppliedLast(f)
    }

    @Test func theReloadCommandAndSIGHUPShareOneEntry() throws {
        let f = try fixture()
        guard case .applied(let report) = f.plane.reload(trigger: .hangup) else {
            Issue.record("the hangup reload was refused")
            return
        }
        #expect(report.changedStreams == ["gyroscope"])
        let outcome = try #require(f.plane.handle(Self.message(#"{"id":"rc","command":"reload-config"}"#)))
        #expect(outcome.reply.ok && outcome.stateChanged)
        #expect(outcome.reply.result == .reload(ReloadReport(changedStreams: ["gyroscope"], needsRestart: [])))
    }

    @Test func aRefusedReloadSaysWhyAndRepliesWithItsCode() throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let f = try fixture()
        let plane = ControlPlane(
            controller: f.controller,
            reconciler: testReconciler(),
            topics: TopicScheme(root: "motion/dev1"),
            deviceID: "dev1",
            statusDocument: { f.controller.status(state: .online, reason: nil, bootCount: 1) },
            logger: logger
        )
        guard case .refused(let failure) = plane.reload(trigger: .hangup) else {
            Issue.record("a reload without a configuration file was applied")
            return
        }
        #expect(failure.kind == .conflict && failure.message.contains("without a configuration file"))
        let reply = try #require(plane.handle(Self.message(#"{"id":"rc","command":"reload-config"}"#))).reply
        #expect(reply.code == 409 && reply.id == "rc" && !reply.ok)
    }

    @Test func resetPedometerReachesTheHistoryThroughTheDoor() throws {
        let idle = try #require(
            try fixture().plane.handle(Self.message(#"{"id":"q0","command":"query-pedometer","from":1,"to":2}"#))
        )
        #expect(idle.reply.code == 409, "no history: the query is refused")
        let history = CountingHistory()
        let f = try fixture(history: history)
        let reset = try #require(f.plane.handle(Self.message(#"{"id":"z","command":"reset-pedometer"}"#)))
        #expect(reset.reply.ok && reset.reply.result == .pedometerReset(ControlResult.PedometerReset()))
        #expect(history.resets.withLock { $0 } == 1)
        let query = try #require(
            f.plane.handle(Self.message(#"{"id":"q","command":"query-pedometer","from":1,"to":2}"#))
        )
        guard case .pedometerQuery(let steps)? = query.reply.result else {
            Issue.record("\(query.reply)")
            return
        }
        #expect(steps.numberOfSteps == 42)
    }

    /// A history holding more activity segments in the interval than one answer carries.
    final class CrowdedHistory: StepHistory {
        func pedometerWasReset(now: Double) {}
        func queryPedometer(from: Double, to: Double) throws(HistoryError) -> ControlResult.PedometerQuery {
            ControlResult.PedometerQuery(PedometerData(startDate: from, endDate: to, numberOfSteps: 0))
        }
        func queryActivity(from: Double, to: Double) throws(HistoryError) -> [ControlResult.ActivitySegment] {
            throw HistoryError(code: .tooManyResults, description: "more than 1000 activity segments start between…")
        }
    }

    @Test func anActivityQueryPastItsLimitIsA400SayingWhyAndTheHelpNamesTheLimit() throws {
        let f = try fixture(history: CrowdedHistory())
        let outcome = try #require(
            f.plane.handle(Self.message(#"{"id":"qa","command":"query-activity","from":1,"to":604800}"#))
        )
        #expect(outcome.reply.code == 400)
        #expect(outcome.reply.message.contains("more than 1000 activity segments"))
        let descriptor = try #require(ControlCommandDescriptor.named("query-activity"))
        #expect(descriptor.arguments.contains("at most \(HistoryStore.maximumActivitySegments) segments"))
    }

    @Test func commandIdsAndArgumentsFromTheNetworkAreLoggedHarmlessAppliedOrRefused() throws {
        let log = RecordingLogHandler()
        let f = try fixture(log: log)
        // JSON escapes: the strict parser refuses raw control characters in strings.
        let escape = #"\u001b[2J\u001b]0;owned\u0007"#
        let applied = try #require(f.plane.handle(Self.message(#"{"id":"a\#(escape)","command":"status"}"#)))
        #expect(applied.reply.code == 200)
        let refused = try #require(f.plane.handle(Self.message(#"{"id":"r\#(escape)","command":"no-such"}"#)))
        #expect(refused.reply.code != 200)
        let lines = log.lines
        #expect(
            lines.contains { $0.contains("control command applied") && $0.contains("a\\u{1B}[2J\\u{1B}]0;owned\\u{7}") }
        )
        #expect(lines.contains { $0.contains("control command refused") && $0.contains("r\\u{1B}[2J") })
        #expect(lines.count >= 2)
        #expect(lines.allSatisfy { !$0.contains("\u{1B}") && !$0.contains("\u{07}") }, "\(lines)")
    }
}
