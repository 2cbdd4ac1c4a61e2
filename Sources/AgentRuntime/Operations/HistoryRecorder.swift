import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Integrations
import Logging
import MotionHistory
import MotionModel
import MotionWire
import Synchronization

/// Keeps step counts and activity segments in the on-device history (`history.sqlite` in the state directory)
/// and answers Core Motion's historical queries: the control door tells it of pedometer resets and hands it
/// the historical queries.
///
/// It polls the estimator streams once a second from a background task — never from the sample path — and
/// stores a pedometer snapshot every 10 s, at each pause and resume, and at shutdown, and an activity segment
/// at each change. Times are Unix seconds.
package final class HistoryRecorder: StepHistory {
    private struct State {
        var sessionID = UUID().uuidString
        var lastSnapshot = -Double.infinity
        var lastWalking = false
        var lastActivity: MotionActivity?
    }

    private let store: HistoryStore
    private let controller: AgentController
    private let clock: any AgentClock
    private let logger: Logger
    private let state = Mutex(State())
    package static let snapshotInterval = 10.0

    /// Opens (or creates) the history; nil when it cannot, after saying why — the agent runs on without history.
    package static func open(
        state: any StateDirectory,
        retentionDays: Int,
        controller: AgentController,
        clock: any AgentClock = SystemClock(),
        logger: Logger
    ) -> HistoryRecorder? {
        do {
            let store = try HistoryStore(
                path: state.location(of: .history),
                retentionDays: retentionDays,
                report: { message in logger.warning("history: \(message)") }
            )
            return HistoryRecorder(store: store, controller: controller, clock: clock, logger: logger)
        } catch {
            logger.error("no step and activity history: \(error) — queries will be refused until this is fixed")
            return nil
        }
    }

    init(store: HistoryStore, controller: AgentController, clock: any AgentClock = SystemClock(), logger: Logger) {
        self.store = store
        self.controller = controller
        self.clock = clock
        self.logger = logger
    }

    /// Records what changed; called about once a second.
    /// Whether the pedometer or the activity stream is on: only then is there anything to record.
    var isRecording: Bool {
        controller.withStream(PedometerStream.self, { $0.settings.enabled }) == true
            || controller.withStream(ActivityStream.self, { $0.settings.enabled }) == true
    }

    /// - Parameter now: Unix seconds; nil: the agent's clock.
    package func poll(now: Double? = nil, force: Bool = false) {
        let now = now ?? clock.realtimeSeconds()
        let pedometer = controller.withStream(PedometerStream.self) {
            stream -> (Int, Double, Int?, Int?, Double, Bool) in
            let p = stream.pedometer
            let data = p.data
            return (p.numberOfSteps, p.distance, data.floorsAscended, data.floorsDescended, p.activeTime, p.isWalking)
        }
        if let (steps, distance, up, down, active, walking) = pedometer {
            let (due, session) = state.withLock { s -> (Bool, String) in
                let due = force || now - s.lastSnapshot >= Self.snapshotInterval || walking != s.lastWalking
                if due {
                    s.lastSnapshot = now
                    s.lastWalking = walking
                }
                return (due, s.sessionID)
            }
            if due {
                store.recordPedometer(
                    PedometerSnapshot(
                        sessionID: session,
                        time: now,
                        numberOfSteps: steps,
                        distance: distance,
                        floorsAscended: up,
                        floorsDescended: down,
                        activeTime: active
                    )
                )
            }
        }
        if let activity = controller.withStream(ActivityStream.self, { $0.current }), !activity.unknown {
            let changed = state.withLock { s -> Bool in
                guard
                    s.lastActivity.map({ !$0.hasSameFlags(as: activity) || $0.confidence != activity.confidence })
                        ?? true
                else { return false }
                s.lastActivity = activity
                return true
            }
            if changed {
                // The stream's startDate is on the sensor clock; history keeps wall time.
                let age = max(0, clock.monotonicSeconds() - activity.startDate)
                store.recordActivity(activity, at: age < 86400 ? now - age : now)
            }
        }
        store.prune(now: now)
    }

    /// After `reset-pedometer`: the counters restart, so history starts a new session at zero.
    package func pedometerWasReset(now: Double) {
        let session = state.withLock { s -> String in
            s.sessionID = UUID().uuidString
            s.lastSnapshot = now
            return s.sessionID
        }
        store.recordPedometer(PedometerSnapshot(sessionID: session, time: now, numberOfSteps: 0))
    }

    package func queryPedometer(from: Double, to: Double) throws(HistoryError) -> ControlResult.PedometerQuery {
        ControlResult.PedometerQuery(try store.queryPedometerData(from: from, to: to))
    }

    package func queryActivity(from: Double, to: Double) throws(HistoryError) -> [ControlResult.ActivitySegment] {
        try store.queryActivityStarting(from: from, to: to).map(ControlResult.ActivitySegment.init)
    }
}
