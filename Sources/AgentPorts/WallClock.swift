#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Maps sensor timestamps (seconds on CLOCK_MONOTONIC, as live sources deliver them) to wall-clock Unix time.
///
/// The offset between the two clocks is re-read at most once a second: reading both clocks is a vDSO call,
/// but doing it per sample at 1 kHz buys nothing, and a stepped wall clock (NTP) is picked up within a second.
/// Timestamps that are not on the monotonic clock (a replayed recording) get the wall time of processing.
package struct WallClock: Sendable {
    private var offset: Double = 0
    private var lastRefresh: Double = -.infinity
    /// Whether the system clock was synchronized at the last refresh (once a second).
    package private(set) var isSynchronized = true
    /// Asks the host (`HostSystem.isClockSynchronized`, adjtimex on Linux); stored once, so the per-sample
    /// path calls it at most once a second and allocates nothing.
    private let synchronization: @Sendable () -> Bool
    /// The agent's time source (`SystemClock` outside the simulation).
    private let clock: any AgentClock

    /// - Parameters:
    ///   - clock: the agent's time source.
    ///   - isSynchronized: the host's answer to "is the system clock disciplined by a time daemon?".
    ///     Processing a recording offline has no live clock to ask, hence the default.
    package init(clock: any AgentClock = SystemClock(), isSynchronized: @escaping @Sendable () -> Bool = { true }) {
        self.clock = clock
        synchronization = isSynchronized
    }

    package static func monotonicNow() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    package static func realtimeNow() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// Wall-clock Unix seconds of the sample taken at `timestamp`.
    package mutating func wallTime(of timestamp: Double) -> Double {
        let now = clock.monotonicSeconds()
        if now - lastRefresh > 1 {
            offset = clock.realtimeSeconds() - now
            lastRefresh = now
            isSynchronized = synchronization()
        }
        // A timestamp far from "now" on the monotonic clock belongs to some other clock.
        if abs(now - timestamp) > 60 { return now + offset }
        return timestamp + offset
    }
}
