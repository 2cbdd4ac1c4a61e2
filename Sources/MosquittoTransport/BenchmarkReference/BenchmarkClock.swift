#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The clocks of the benchmark reference clients: CLOCK_MONOTONIC, which the agent stamps samples with, so a
/// latency is receipt minus sample time; and CLOCK_REALTIME deadlines, which `pthread_cond_timedwait` reads.
package enum BenchmarkClock {
    /// CLOCK_MONOTONIC in nanoseconds.
    package static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// CLOCK_REALTIME `seconds` from now, for `pthread_cond_timedwait`.
    static func realtimeDeadline(after seconds: Double) -> timespec {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(seconds * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return deadline
    }
}
