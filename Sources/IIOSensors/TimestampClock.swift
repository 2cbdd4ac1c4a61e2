#if canImport(Glibc)
import Glibc
#endif

/// Maps a device's `current_timestamp_clock` onto CLOCK_MONOTONIC, the one time base every device's samples
/// share (so accel and gyro from separate devices line up). IIO's default is realtime, which jumps with NTP;
/// the offset is re-measured on every refill and followed when it moves by more than 1 ms.
struct TimestampClock {
    let clock: clockid_t
    /// Seconds to add to a device timestamp to get CLOCK_MONOTONIC seconds.
    private(set) var offset: Double = 0
    private var measured = false

    init(name: String?) {
        switch name ?? "realtime" {
        case "monotonic": clock = CLOCK_MONOTONIC
        case "monotonic_raw": clock = CLOCK_MONOTONIC_RAW
        case "monotonic_coarse": clock = CLOCK_MONOTONIC_COARSE
        case "realtime_coarse": clock = CLOCK_REALTIME_COARSE
        case "boottime": clock = CLOCK_BOOTTIME
        case "tai": clock = CLOCK_TAI
        default: clock = CLOCK_REALTIME
        }
    }

    static func seconds(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    static func monotonicNow() -> Double { seconds(CLOCK_MONOTONIC) }

    mutating func refresh() {
        guard clock != CLOCK_MONOTONIC else { return }
        let now = TimestampClock.monotonicNow() - TimestampClock.seconds(clock)
        if !measured || abs(now - offset) > 1e-3 {
            offset = now
            measured = true
        }
    }
}
