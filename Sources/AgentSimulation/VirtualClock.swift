import AgentPorts
import Synchronization

/// The simulation's time: an `AgentClock` that moves only when the simulation moves it.
///
/// Monotonic time starts at `start` and advances to the earliest sleeper's deadline when the simulation has
/// nothing else to do; a sleeper whose deadline has come is resumed (in deadline order, ties in the order they
/// began to sleep), so ten simulated minutes of an idle agent cost as many steps as the agent has timers, not
/// ten minutes. Real time is monotonic time plus an offset that `stepRealtime(by:)` changes, as NTP or an
/// operator stepping the system clock would.
package final class VirtualClock: AgentClock, @unchecked Sendable {
    /// One sleep; guarded by the clock's lock.
    private final class Ticket: @unchecked Sendable {
        enum Phase {
            case pending
            case waiting(CheckedContinuation<Void, any Error>)
            /// Its deadline came before its task suspended: it wakes as soon as it does.
            case due
            case finished
        }
        var phase = Phase.pending
        let deadline: Double
        let order: UInt64

        init(deadline: Double, order: UInt64) {
            self.deadline = deadline
            self.order = order
        }
    }

    private struct State {
        var now: Double
        var realtimeOffset: Double
        var heap: [Ticket] = []
        var order: UInt64 = 0
        var asleep = 0
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - start: the monotonic clock's first reading, seconds (a device's uptime at the simulation's start).
    ///   - realtimeStart: the real-time clock's first reading, Unix seconds.
    package init(start: Double = 100, realtimeStart: Double = 1_790_000_000) {
        state = Mutex(State(now: start, realtimeOffset: realtimeStart - start))
    }

    package func monotonicSeconds() -> Double { state.withLock { $0.now } }

    package func realtimeSeconds() -> Double { state.withLock { $0.now + $0.realtimeOffset } }

    package func sleep(seconds: Double) async throws {
        try Task.checkCancellation()
        let ticket = state.withLock { state -> Ticket in
            state.order += 1
            let delay = seconds.isFinite ? max(0, seconds) : 1e12
            let ticket = Ticket(deadline: state.now + delay, order: state.order)
            Self.push(ticket, into: &state.heap)
            return ticket
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    switch ticket.phase {
                    case .pending:
                        ticket.phase = .waiting(continuation)
                        state.asleep += 1
                        return nil
                    case .due:
                        ticket.phase = .finished
                        return .success(())
                    case .waiting, .finished:
                        return .failure(CancellationError())
                    }
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                switch ticket.phase {
                case .pending, .due:
                    ticket.phase = .finished
                    return nil
                case .waiting(let continuation):
                    ticket.phase = .finished
                    state.asleep -= 1
                    return continuation
                case .finished:
                    return nil
                }
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// The earliest deadline of a task still sleeping; nil when none sleeps.
    package var nextDeadline: Double? {
        state.withLock { state in
            while let first = state.heap.first, case .finished = first.phase {
                _ = Self.pop(from: &state.heap)
            }
            return state.heap.first?.deadline
        }
    }

    /// Tasks asleep on this clock.
    package var sleepers: Int { state.withLock { $0.asleep } }

    /// Moves monotonic time to `time` (never backwards) and resumes every sleeper due by then, earliest first.
    /// Returns how many were resumed; their tasks run when the simulation next runs its executor.
    @discardableResult
    package func advance(to time: Double) -> Int {
        var due: [CheckedContinuation<Void, any Error>] = []
        state.withLock { state in
            state.now = max(state.now, time)
            while let first = state.heap.first, first.deadline <= state.now {
                _ = Self.pop(from: &state.heap)
                switch first.phase {
                case .waiting(let continuation):
                    state.asleep -= 1
                    due.append(continuation)
                    first.phase = .finished
                case .pending:
                    first.phase = .due
                case .due, .finished:
                    break
                }
            }
        }
        for continuation in due { continuation.resume() }
        return due.count
    }

    /// Steps the real-time clock by `seconds` (negative: backwards), leaving monotonic time alone.
    package func stepRealtime(by seconds: Double) {
        state.withLock { $0.realtimeOffset += seconds }
    }

    // MARK: A binary heap ordered by (deadline, order)

    private static func less(_ a: Ticket, _ b: Ticket) -> Bool {
        a.deadline < b.deadline || (a.deadline == b.deadline && a.order < b.order)
    }

    private static func push(_ ticket: Ticket, into heap: inout [Ticket]) {
        heap.append(ticket)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func pop(from heap: inout [Ticket]) -> Ticket? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, less(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, less(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }
}
