import Testing

@testable import IIOSensors

#if canImport(Glibc)
import Glibc
#endif

/// `TimestampClock` against a scripted pair of clocks: a read of the device's clock the thread was preempted
/// around must not move the offset (every later sample would jump by the preemption), a real step must.
@Suite struct TimestampClockTests {
    /// Monotonic time advancing 1 µs a read, a device clock `deviceOffset` behind or ahead of it, and the
    /// preemptions (s) that hit between a monotonic read and the device read, one per bracket, in order.
    final class Clocks: @unchecked Sendable {
        var monotonic = 1000.0
        /// Device time minus monotonic time.
        var deviceOffset = 1_790_000_000.0
        var preemptions: [Double] = []

        func read(_ clock: clockid_t) -> Double {
            if clock == CLOCK_MONOTONIC {
                monotonic += 1e-6
                return monotonic
            }
            if !preemptions.isEmpty { monotonic += preemptions.removeFirst() }
            return monotonic + deviceOffset
        }
    }

    @Test func aPreemptedMeasurementDoesNotMoveTheOffsetAndATightOneFollowsAStep() {
        let clocks = Clocks()
        var clock = TimestampClock(name: "realtime", read: clocks.read)
        clock.refresh()
        let first = clock.offset
        #expect(abs(first + clocks.deviceOffset) < 1e-5, "monotonic − device: \(first)")

        // Every bracket of one measurement preempted by 2–6 ms: a single pair would have moved the offset.
        clocks.preemptions = [0.004, 0.002, 0.006, 0.003]
        clock.refresh()
        #expect(clock.offset == first, "moved by \(clock.offset - first) s on a preempted measurement")

        // The first bracket preempted, the second tight: measured to the microsecond, within the step threshold.
        clocks.preemptions = [0.005]
        clock.refresh()
        #expect(clock.offset == first)

        // NTP steps the device clock (realtime) by 2 s: followed.
        clocks.deviceOffset += 2
        clock.refresh()
        #expect(abs(clock.offset - (first - 2)) < 1e-5, "\(clock.offset - first)")
    }

    @Test func aMonotonicDeviceClockNeedsNoOffset() {
        let clocks = Clocks()
        var clock = TimestampClock(name: "monotonic", read: clocks.read)
        clock.refresh()
        #expect(clock.offset == 0)
    }
}
