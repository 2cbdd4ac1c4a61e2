import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionEstimation

/// Keeps what the estimators learned — gyroscope bias, magnetometer calibration — across restarts, in
/// `device-motion.json` in the state directory. Saved periodically and at shutdown, from the control path:
/// the hot path never touches the disk.
struct EstimatorStateStore: Sendable {
    let state: any StateDirectory
    let logger: Logger

    init(state: any StateDirectory, logger: Logger) {
        self.state = state
        self.logger = logger
    }

    /// The file, for messages.
    var path: String { state.location(of: .estimatorState) }

    func load() -> DeviceMotionEstimatorState? {
        do {
            return try state.decodeJSON(DeviceMotionEstimatorState.self, from: .estimatorState)
        } catch {
            logger.error(
                "\(path) is unreadable (\(error)): starting with no gyroscope bias or magnetometer calibration — it will be rewritten"
            )
            return nil
        }
    }

    func save(_ estimator: DeviceMotionEstimatorState) {
        do {
            try state.replaceJSON(.estimatorState, with: estimator)
        } catch {
            logger.error(
                "cannot save the estimator state to \(path): \(error) — the previous calibration stays; make agent.state_dir writable and give it room"
            )
        }
    }
}
