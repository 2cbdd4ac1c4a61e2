/// The agent's one time source. Every read of time and every sleep of the assembled agent goes through the clock
/// the builder is given: production passes `SystemClock`, the simulation (AgentSimulation) a virtual clock that
/// moves only when the simulation moves it, so that a run is a function of its seed and ten simulated minutes
/// take milliseconds.
///
/// Two clocks, as on Linux: the monotonic one never steps and carries deadlines, intervals and sample timestamps;
/// the real-time one is what payloads' `time` and commands' ages are read against, and it steps when the system
/// clock is set (NTP after boot, an operator, a board without an RTC starting in 1970).
public protocol AgentClock: Sendable {
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
    public func sleep(untilMonotonic deadline: Double) async throws {
        try await sleep(seconds: deadline - monotonicSeconds())
    }

    /// Unix milliseconds on the real-time clock (the durable log's and Sparkplug's timestamps); 0 before 1970.
    public func realtimeMilliseconds() -> UInt64 { UInt64(max(0, realtimeSeconds() * 1000)) }

    /// The monotonic clock as a Swift `Clock`, for the state machines that take one (`ConnectionSupervisor`,
    /// the Sparkplug edge node).
    public var monotonic: AgentMonotonicClock { AgentMonotonicClock(self) }
}

/// The system's clocks: CLOCK_MONOTONIC, CLOCK_REALTIME and `Task.sleep`.
public struct SystemClock: AgentClock {
    public init() {}

    public func monotonicSeconds() -> Double { WallClock.monotonicNow() }

    public func realtimeSeconds() -> Double { WallClock.realtimeNow() }

    public func sleep(seconds: Double) async throws {
        guard seconds > 0 else {
            try Task.checkCancellation()
            return
        }
        try await Task.sleep(for: .nanoseconds(Int64(min(seconds, 1e9) * 1e9)))
    }
}

/// An `AgentClock`'s monotonic clock as a Swift `Clock`, with instants in seconds.
public struct AgentMonotonicClock: Clock {
    public struct Instant: InstantProtocol {
        /// Seconds on the agent's monotonic clock.
        public var seconds: Double

        public init(seconds: Double) { self.seconds = seconds }

        public func advanced(by duration: Duration) -> Instant {
            Instant(seconds: seconds + duration.seconds)
        }

        public func duration(to other: Instant) -> Duration {
            .nanoseconds(Int64(((other.seconds - seconds) * 1e9).rounded()))
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.seconds < rhs.seconds }
    }

    private let source: any AgentClock

    public init(_ source: any AgentClock) { self.source = source }

    public var now: Instant { Instant(seconds: source.monotonicSeconds()) }

    public var minimumResolution: Duration { .nanoseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try await source.sleep(seconds: deadline.seconds - source.monotonicSeconds())
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    public var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) * 1e-18
    }
}
