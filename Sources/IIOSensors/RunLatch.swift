import Synchronization

/// Lets `run(into:)` await the end of every acquisition thread without blocking a concurrency thread.
final class RunLatch: Sendable {
    private struct State {
        var remaining: Int
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(remaining: count, waiter: nil))
    }

    func arrive() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.remaining -= 1
            guard s.remaining == 0 else { return nil }
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { s -> Bool in
                if s.remaining <= 0 { return true }
                s.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
