import AgentPorts
import Foundation
import Logging
import MotionModel

/// Keeps device motion's reference attitude and when it was set in `reference-attitude.json` in the state
/// directory, so the capture time survives a restart. Which quaternion is in force is decided by the
/// configuration's layers (config.yaml, desired documents, command overrides — `overrides.json` keeps a
/// command's); this file only remembers when that quaternion became the reference.
package struct ReferenceAttitudeStore: Sendable {
    let state: any StateDirectory
    let logger: Logger

    package init(state: any StateDirectory, logger: Logger) {
        self.state = state
        self.logger = logger
    }

    /// The file, for messages.
    package var path: String { state.location(of: .referenceAttitude) }

    /// The kept reference, or nil when there is none or the file is unusable (logged).
    package func load() -> ReferenceAttitude? {
        do {
            guard let kept = try state.decodeJSON(ReferenceAttitude.self, from: .referenceAttitude) else { return nil }
            guard kept.quaternion.isFinite, abs(kept.quaternion.norm - 1) < 1e-6, kept.time.isFinite else {
                logger.error(
                    "\(path) holds no unit quaternion and finite time: its capture time is dropped — the reference in force gets the time of this start"
                )
                return nil
            }
            return kept
        } catch {
            logger.error(
                "\(path) is unreadable (\(error)): the reference in force gets the time of this start — the file will be rewritten"
            )
            return nil
        }
    }

    /// Replaces the file (`nil`: removes it). Failures are logged: the reference applies now, only its
    /// capture time would be lost at a restart.
    package func save(_ reference: ReferenceAttitude?) {
        guard let reference else {
            do {
                try state.remove(.referenceAttitude)
            } catch {
                logger.error(
                    "\(error) — the stale capture time is ignored at the next start unless the same reference is set again"
                )
            }
            return
        }
        do {
            try state.replaceJSON(.referenceAttitude, with: reference)
        } catch {
            logger.error(
                "cannot save the reference attitude to \(path): \(error) — it applies now, but after a restart its capture time becomes the time of that start; make agent.state_dir writable and give it room"
            )
        }
    }

    /// The reference to run with when `quaternion` is in force at `now`: the kept one (and its capture time)
    /// when it is the same rotation, else a new one set now — written back either way, so the file always
    /// follows the configuration.
    package func reconcile(_ quaternion: Quaternion?, now: Double) -> ReferenceAttitude? {
        guard let quaternion else {
            save(nil)
            return nil
        }
        if let kept = load(), kept.quaternion.isSame(as: quaternion) { return kept }
        let reference = ReferenceAttitude(quaternion: quaternion, time: now)
        save(reference)
        return reference
    }
}

extension Quaternion {
    /// The same quaternion up to rounding (the layers keep it as text, the file as JSON numbers).
    func isSame(as other: Quaternion) -> Bool {
        let a = normalized
        let b = other.normalized
        return max(abs(a.w - b.w), abs(a.x - b.x), abs(a.y - b.y), abs(a.z - b.z)) < 1e-12
    }
}
