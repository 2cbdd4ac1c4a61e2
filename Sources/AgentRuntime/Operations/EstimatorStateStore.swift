import AgentPorts
import Foundation
import Logging
import MotionEstimation

/// Keeps what the estimators learned — gyroscope bias, magnetometer calibration — across restarts, in
/// `device-motion.json` in the state directory. Saved periodically and at shutdown, from the control path:
/// the hot path never touches the disk.
struct EstimatorStateStore: Sendable {
    let path: String
    let logger: Logger

    init(stateDirectory: String, logger: Logger) {
        path = stateDirectory + "/device-motion.json"
        self.logger = logger
    }

    func load() -> DeviceMotionEstimatorState? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(DeviceMotionEstimatorState.self, from: data)
        } catch {
            logger.error(
                "\(path) is unreadable (\(error)): starting with no gyroscope bias or magnetometer calibration — it will be rewritten"
            )
            return nil
        }
    }

    func save(_ state: DeviceMotionEstimatorState) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            try AtomicFile.write(Array(encoder.encode(state)), to: path)
        } catch {
            logger.error(
                "cannot save the estimator state to \(path): \(error) — the previous calibration stays; make agent.state_dir writable and give it room"
            )
        }
    }
}
