#if canImport(Glibc)
import Glibc
#endif

/// Maps a device's `current_timestamp_clock` onto CLOCK_MONOTONIC, the one time base every device's samples
/// share (so accel and gyro from separate devices line up). IIO's default is realtime, which jumps with NTP;
/// the offset is re-measured on every refill and followed when it moves by more than 1 ms.
///
/// A measurement reads monotonic, the device's clock, monotonic again: a thread preempted between the reads (a
/// loaded host: milliseconds) measures an offset off by the preemption, which a single pair of reads cannot tell
/// from a clock step — every sample after it then jumped by that much (seen as 10 ms samples 1–5 ms apart on a
/// loaded CI host). So each measurement keeps the tightest of a few brackets, and only a tight one may move the
/// offset.
struct TimestampClock {
    let clock: clockid_t
    /// Seconds to add to a device timestamp to get CLOCK_MONOTONIC seconds.
    private(set) var offset: Double = 0
    private var measured = false
    /// Reads a clock, s (`clock_gettime`; tests pass their own).
    private let read: (clockid_t) -> Double

    /// A clock step smaller than this is not followed (the offset would wobble with every measurement), s.
    static let stepThreshold = 1e-3
    /// Half the bracket a measurement may have to move the offset, s: far below the step threshold.
    static let maximumUncertainty = 1e-4
    /// Brackets tried per measurement; the first tight one ends it.
    static let attempts = 4

    init(name: String?, read: @escaping (clockid_t) -> Double = TimestampClock.seconds) {
        self.read = read
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

    /// The offset against the midpoint of the tightest monotonic bracket around a read of the device's clock, and
    /// half that bracket (how far off it can be).
    func measure() -> (offset: Double, uncertainty: Double) {
        var best = (offset: 0.0, uncertainty: Double.infinity)
        for _ in 0..<Self.attempts {
            let before = read(CLOCK_MONOTONIC)
            let device = read(clock)
            let after = read(CLOCK_MONOTONIC)
            let uncertainty = (after - before) / 2
            if uncertainty < best.uncertainty { best = ((before + after) / 2 - device, uncertainty) }
            if uncertainty <= Self.maximumUncertainty { break }
        }
        return best
    }

    mutating func refresh() {
        guard clock != CLOCK_MONOTONIC else { return }
        let now = measure()
        if !measured {
            // The first offset is needed whatever its bracket; a later tight measurement corrects a loose one by
            // more than the step threshold.
            offset = now.offset
            measured = true
        } else if now.uncertainty <= Self.maximumUncertainty, abs(now.offset - offset) > Self.stepThreshold {
            offset = now.offset
        }
    }
}
