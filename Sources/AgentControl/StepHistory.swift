import MotionHistory
import MotionWire

/// The on-device step and activity history as the control door sees it: told when the pedometer is reset, and
/// asked Core Motion's historical queries (`HistoryRecorder` in the runtime).
package protocol StepHistory: AnyObject, Sendable {
    func pedometerWasReset(now: Double)
    func queryPedometer(from: Double, to: Double) throws(HistoryError) -> ControlResult.PedometerQuery
    func queryActivity(from: Double, to: Double) throws(HistoryError) -> [ControlResult.ActivitySegment]
}
