import Synchronization

/// A clock for the pure state machine: `now` moves only by `advance(by:)`. The edge node never sleeps, so
/// `sleep` just waits out the real time to the deadline's offset (unused by these tests).
final class SteppedClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let current = Mutex(Instant(offset: .zero))

    var now: Instant { current.withLock { $0 } }
    var minimumResolution: Duration { .nanoseconds(1) }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try await Task.sleep(for: now.duration(to: deadline))
    }

    func advance(by duration: Duration) { current.withLock { $0 = $0.advanced(by: duration) } }
}
