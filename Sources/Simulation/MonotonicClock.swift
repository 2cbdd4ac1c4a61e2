#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CLOCK_MONOTONIC in seconds, the clock the kernel's IIO buffers timestamp with by default, and
/// absolute-deadline sleeps on it.
enum MonotonicClock {
    @inline(__always)
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// Sleeps until the monotonic clock reads `deadline` (s). An absolute deadline does not accumulate the
    /// wake-up latency of earlier sleeps, so a paced loop does not drift.
    static func sleep(until deadline: Double) {
        var seconds = deadline.rounded(.down)
        var nanoseconds = ((deadline - seconds) * 1e9).rounded()
        if nanoseconds >= 1e9 {
            seconds += 1
            nanoseconds -= 1e9
        }
        var ts = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
        #if canImport(Glibc)
        // Restart after a signal: EINTR returns early with the same absolute deadline still valid.
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
        #else
        let remaining = deadline - now()
        if remaining > 0 { usleep(UInt32(remaining * 1e6)) }
        _ = ts
        #endif
    }
}
