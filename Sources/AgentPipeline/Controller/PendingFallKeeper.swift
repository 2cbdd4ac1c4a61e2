import MotionModel
import Synchronization

/// Carries the fall awaiting a resolution from the events stream to `pending-fall.json` without the stream touching
/// the disk: the stream, under the hub's lock on the acquisition thread, records the newest state and wakes `run`,
/// which writes it off the per-sample path (EstimatorStateService runs it, and `flush`es what is left at shutdown,
/// after acquisition has stopped).
package final class PendingFallKeeper: Sendable {
    package let store: PendingFallStore

    /// What the file should say next.
    private enum Change {
        case keep(FallDetectionEvent)
        case forget
    }

    private let pending = Mutex<Change?>(nil)
    private let wake: AsyncStream<Void>.Continuation
    private let wakes: AsyncStream<Void>

    package init(store: PendingFallStore) {
        self.store = store
        (wakes, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The fall an earlier run kept (at start, before the hub runs).
    package func load() -> FallDetectionEvent? { store.load() }

    /// The fall as published — its report or its follow-up — or nil (no fall watched any more). Never waits.
    package func record(_ fall: FallDetectionEvent?) {
        pending.withLock { $0 = fall.map(Change.keep) ?? .forget }
        wake.yield()
    }

    /// Writes each recorded change until the task is cancelled.
    package func run() async {
        for await _ in wakes { flush() }
    }

    /// Writes the newest recorded change, if any is unwritten.
    package func flush() {
        let change = pending.withLock { pending -> Change? in
            defer { pending = nil }
            return pending
        }
        switch change {
        case .keep(let fall): store.save(fall)
        case .forget: store.save(nil)
        case nil: break
        }
    }
}
