import AgentPorts

/// When a real-time replay wakes up to deliver: like a reader of a hardware FIFO, it sleeps until a batch of
/// samples is due and hands over every sample due by then, instead of sleeping once per sample.
///
/// At 1 kHz one sleep per sample is 1000 wake-ups (and context switches) a second, which cost more CPU than
/// the whole pipeline behind them; reading the FIFO every `interval` is what the IIO source does with
/// hardware (`IIODeviceWorker.samplesPerRefill`: about 20 ms per refill). Samples keep their timestamps;
/// each waits at most `interval` longer than its due time. Recordings slower than `1 / interval` still wake
/// once per sample, at its due time.
package struct ReplayDeliverySchedule: Sendable, Hashable {
    /// Seconds between wake-ups while samples come faster than that.
    package let interval: Double
    /// Every sample due at or before this monotonic time (s) may be delivered without sleeping.
    package private(set) var releasedUntil = -Double.infinity

    /// 10 ms: 100 wake-ups a second at any rate above 100 Hz, and at most 10 ms added to a sample's delay —
    /// half the IIO source's refill period, so a replay is never laggier than the hardware it stands for.
    package static let defaultInterval = 0.01

    package init(interval: Double = Self.defaultInterval) {
        self.interval = max(interval, 0)
    }

    /// The monotonic time (s) to sleep until before the sample due at `due` may be delivered; nil when it
    /// is released already. One interval after the previous wake-up, or the sample's own due time if later
    /// (a slow recording, or a gap in it).
    package func wakeTime(forSampleDueAt due: Double) -> Double? {
        guard due > releasedUntil else { return nil }
        return max(due, releasedUntil + interval)
    }

    /// Records a wake-up at monotonic time `now` (s), at or after the wake time asked for: everything due by
    /// then is released. After a late wake-up (a stalled machine) what fell due meanwhile goes out at once,
    /// as a full FIFO would.
    package mutating func woke(at now: Double) {
        releasedUntil = max(releasedUntil, now)
    }
}
