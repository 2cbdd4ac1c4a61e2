import AgentPorts
import Foundation
import Logging
import MotionModel

/// Keeps the fall the events stream reported and has not yet resolved in `pending-fall.json` in the state
/// directory, as its first report went out (wall-clock dates), so a restart does not forget it: the next run
/// watches it for the rest of its response window and publishes its one follow-up with the same `date`.
/// Written twice a fall — the report, then the follow-up in its place (replaced, not removed: a removal the disk
/// has not written back may come back after a power cut, and a second follow-up with it); written by
/// `PendingFallKeeper` off the per-sample path.
package struct PendingFallStore: Sendable {
    let state: any StateDirectory
    let logger: Logger

    package init(state: any StateDirectory, logger: Logger) {
        self.state = state
        self.logger = logger
    }

    /// The file, for messages.
    package var path: String { state.location(of: .pendingFall) }

    /// The kept fall awaiting a resolution, or nil when there is none (no file, or its follow-up went out) or the
    /// file is unusable (logged).
    package func load() -> FallDetectionEvent? {
        do {
            guard let kept = try state.decodeJSON(FallDetectionEvent.self, from: .pendingFall) else { return nil }
            if kept.resolution != nil { return nil }
            guard kept.date.isFinite, kept.detectionDate.isFinite,
                kept.detectionDate >= kept.date, kept.peakAcceleration.isFinite, kept.orientationChange.isFinite
            else {
                logger.error(
                    "\(path) holds no unresolved fall with finite dates: ignored — a fall reported before this start gets no follow-up; the file is removed"
                )
                save(nil)
                return nil
            }
            return kept
        } catch {
            logger.error(
                "\(path) is unreadable (\(error)): ignored — a fall reported before this start gets no follow-up; the file is removed"
            )
            save(nil)
            return nil
        }
    }

    /// Replaces the file with a fall as published, its report or its follow-up (`nil`: removes it — a fall no
    /// longer watched). Failures are logged: the fall is watched now, only a restart before its resolution would
    /// forget it.
    package func save(_ fall: FallDetectionEvent?) {
        do {
            guard let fall else {
                try state.remove(.pendingFall)
                return
            }
            try state.replaceJSON(.pendingFall, with: fall, pretty: false)
        } catch {
            logger.error(
                "cannot keep the fall awaiting a resolution in \(path): \(error) — it is watched now, but a restart before its resolution would leave it without a follow-up; make agent.state_dir writable and give it room"
            )
        }
    }
}
