/// Picks, from samples arriving at the hardware rate, the ones a stream publishes at its own rate.
///
/// A phase accumulator on sample timestamps: each pick schedules the next due time one interval later and the
/// first sample within half a hardware period of it is taken. So the average output rate is exactly the
/// stream's rate even when it does not divide the hardware rate (100 Hz hardware, 60 Hz stream → picks
/// 0, 20, 30, 50, 70, 80, 100 ms…), every published sample keeps its own timestamp, and after a gap the
/// schedule restarts instead of bursting to catch up.
package struct Decimator: Sendable, Hashable {
    /// Seconds between published samples.
    package private(set) var interval: Double
    /// Half the hardware sampling period, seconds: the tolerance for "due".
    package private(set) var halfPeriod: Double
    private var nextDue: Double = -.infinity

    /// - Parameters:
    ///   - rateHz: the stream's effective rate (already clamped to the hardware rate).
    ///   - hardwareRateHz: the rate samples arrive at.
    package init(rateHz: Double, hardwareRateHz: Double) {
        interval = rateHz > 0 ? 1 / rateHz : .infinity
        halfPeriod = hardwareRateHz > 0 ? 0.5 / hardwareRateHz : 0
    }

    /// Whether the sample at `timestamp` (seconds) is published.
    @inline(__always)
    package mutating func accept(_ timestamp: Double) -> Bool {
        guard timestamp >= nextDue - halfPeriod else { return false }
        // More than two intervals late means a gap (or the first sample): restart the schedule here.
        if timestamp - nextDue > 2 * interval {
            nextDue = timestamp + interval
        } else {
            nextDue += interval
        }
        return true
    }
}
