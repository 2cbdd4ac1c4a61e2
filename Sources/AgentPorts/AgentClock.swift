/// The agent's one time source. Every read of time and every sleep of the assembled agent goes through the clock
/// the builder is given: production passes `SystemClock`, the simulation (AgentSimulation) a virtual clock that
/// moves only when the simulation moves it, so that a run is a function of its seed and ten simulated minutes
/// take milliseconds.
///
/// Two clocks, as on Linux: the monotonic one never steps and carries deadlines, intervals and sample timestamps;
/// the real-time one is what payloads' `time` and commands' ages are read against, and it steps when the system
/// clock is set (NTP after boot, an operator, a board without an RTC starting in 1970).
package protocol AgentClock: Sendable {
    /// Seconds on the monotonic clock (CLOCK_MONOTONIC on Linux).
    func monotonicSeconds() -> Double
    /// Unix seconds (CLOCK_REALTIME on Linux).
    func realtimeSeconds() -> Double
    /// Suspends the calling task for `seconds` of monotonic time (at once for 0 or less). Throws
    /// `CancellationError` when the task is cancelled, like `Task.sleep`.
    func sleep(seconds: Double) async throws
}

extension AgentClock {
    /// Sleeps until the monotonic clock reads `deadline` seconds.
    package func sleep(untilMonotonic deadline: Double) async throws {
        try await sleep(seconds: deadline - monotonicSeconds())
    }

    /// Unix milliseconds on the real-time clock (the durable log's and Sparkplug's timestamps); 0 before 1970.
    package func realtimeMilliseconds() -> UInt64 { UInt64(max(0, realtimeSeconds() * 1000)) }

    /// The monotonic clock as a Swift `Clock`, for the state machines that take one (`ConnectionSupervisor`,
    /// the Sparkplug edge node).
    package var monotonic: AgentMonotonicClock { AgentMonotonicClock(self) }
}

/// The system's clocks: CLOCK_MONOTONIC, CLOCK_REALTIME and `Task.sleep`.
package struct SystemClock: AgentClock {
    package init() {}

    package func monotonicSeconds() -> Double { WallClock.monotonicNow() }

    package func realtimeSeconds() -> Double { WallClock.realtimeNow() }

    package func sleep(seconds: Double) async throws {
        guard seconds > 0 else {
            try Task.checkCancellation()
            return
        }
        try await Task.sleep(for: .nanoseconds(Int64(min(seconds, 1e9) * 1e9)))
    }
}

/// An `AgentClock`'s monotonic clock as a Swift `Clock`, with instants in seconds.
package struct AgentMonotonicClock: Clock {
    package struct Instant: InstantProtocol {
        /// Seconds on the agent's monotonic clock.
        package var seconds: Double

        package init(seconds: Double) { self.seconds = seconds }

        package func advanced(by duration: Duration) -> Instant {
            Instant(seconds: seconds + duration.seconds)
        }

        package func duration(to other: Instant) -> Duration {
            .nanoseconds(Int64(((other.seconds - seconds) * 1e9).rounded()))
        }

        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.seconds < rhs.seconds }
    }

    private let source: any AgentClock

    package init(_ source: any AgentClock) { self.source = source }

    package var now: Instant { Instant(seconds: source.monotonicSeconds()) }

    package var minimumResolution: Duration { .nanoseconds(1) }

    package func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try await source.sleep(seconds: deadline.seconds - source.monotonicSeconds())
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    package var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) * 1e-18
    }
}
