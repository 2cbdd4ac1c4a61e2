import Synchronization

/// Opens once the agent has booted (boot counter, controller, restored estimator state): services that need
/// the boot count or a started controller wait here, since a `ServiceGroup` starts its services together.
final class AgentStartup: Sendable {
    private enum State {
        case waiting([CheckedContinuation<UInt64?, Never>])
        case open(UInt64)
        case failed
    }

    private let state = Mutex(State.waiting([]))

    /// The boot count once the agent booted; nil when booting failed (the failing service ends the group).
    func bootCount() async -> UInt64? {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> UInt64?? in
                switch state {
                case .waiting(var waiters):
                    waiters.append(continuation)
                    state = .waiting(waiters)
                    return .none
                case .open(let boot): return .some(boot)
                case .failed: return .some(nil)
                }
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    var isOpen: Bool {
        state.withLock { if case .open = $0 { true } else { false } }
    }

    func open(bootCount: UInt64) { settle(.open(bootCount), bootCount) }

    func fail() { settle(.failed, nil) }

    private func settle(_ final: State, _ value: UInt64?) {
        let waiters = state.withLock { state -> [CheckedContinuation<UInt64?, Never>] in
            guard case .waiting(let waiters) = state else { return [] }
            state = final
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }
}
