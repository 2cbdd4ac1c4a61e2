import AgentPorts
import MotionModel
import Recording
import Testing

@Suite struct ReplayDeliveryScheduleTests {
    /// Replays the wake-up decisions over samples due every `period` seconds for `seconds`, with wake-ups
    /// landing exactly when asked (plus `lateness`); returns the wake-up count and the longest wait past a
    /// sample's due time.
    static func simulate(period: Double, seconds: Double, lateness: Double = 0) -> (wakeUps: Int, maxDelay: Double) {
        var schedule = ReplayDeliverySchedule()
        var now = 0.0
        var wakeUps = 0
        var maxDelay = 0.0
        let count = Int((seconds / period).rounded())
        for k in 0..<count {
            let due = Double(k) * period
            if let wake = schedule.wakeTime(forSampleDueAt: due) {
                #expect(wake >= due)
                now = max(now, wake + lateness)
                schedule.woke(at: now)
                wakeUps += 1
            }
            maxDelay = max(maxDelay, now - due)
        }
        return (wakeUps, maxDelay)
    }

    @Test func aOneKilohertzRecordingWakesAHundredTimesASecond() {
        let result = Self.simulate(period: 0.001, seconds: 1)
        // One at the first sample, then one per 10 ms for the 999 ms that follow.
        #expect(result.wakeUps == 101)
        #expect(result.maxDelay <= ReplayDeliverySchedule.defaultInterval + 1e-9)
    }

    @Test func aSlowRecordingWakesForEverySampleAtItsDueTime() {
        let result = Self.simulate(period: 0.05, seconds: 1)
        #expect(result.wakeUps == 20)
        #expect(result.maxDelay == 0)
    }

    @Test func aLateWakeUpReleasesEverythingDueMeanwhile() {
        var schedule = ReplayDeliverySchedule()
        #expect(schedule.wakeTime(forSampleDueAt: 0) == 0)
        schedule.woke(at: 0.5)  // the machine stalled for half a second
        for k in 1...500 { #expect(schedule.wakeTime(forSampleDueAt: Double(k) * 0.001) == nil) }
        #expect(schedule.wakeTime(forSampleDueAt: 0.501) == 0.51)
    }
}
