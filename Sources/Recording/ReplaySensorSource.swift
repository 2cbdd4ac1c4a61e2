import AgentPorts
import Foundation
import MotionModel
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Plays a recording through the whole pipeline, at its recorded pace or as fast as the sink takes it.
///
/// The file is read twice over: once when the source is made, to check every row and learn the sensors and
/// rate, and then while playing, a block at a time (`RecordingReader`), so memory does not grow with the
/// recording's length.
///
/// It presents one device (`replay`) whose only rate is the recording's; streams asking for less are decimated
/// by the hub as with hardware. Sensors the plan switches off are blanked from the samples. With `loop`, the
/// recording starts over with timestamps continuing, so consumers never see time go backwards. In real time
/// the samples come in batches, as from a hardware FIFO (`ReplayDeliverySchedule`).
package final class ReplaySensorSource: SensorSource {
    /// How many samples the file held when the source was made, and over how many seconds (the summary that
    /// found them is not kept: its rate estimate's timestamps are of no use once the device is described).
    package let recordedSamples: Int
    package let recordedDuration: Double
    /// The first sample's timestamp: the origin of the real-time schedule.
    private let firstTimestamp: Double
    package let path: String
    package let realtime: Bool
    package let loop: Bool
    package let devices: [SensorDevice]
    /// The planned sensors as a bit mask (`Self.bit`): read once per sample without a lock.
    private let enabled = Atomic<UInt8>(0)
    /// Longest single sleep, s, so a stop is seen soon even in a recording with long gaps.
    static let longestSleep = 0.05

    package init(path: String, realtime: Bool, loop: Bool) throws(RecordingError) {
        var reader = try RecordingReader(path: path)
        var recorded = RecordingSummary()
        while let sample = try reader.next() { recorded.add(sample) }
        guard recorded.sampleCount > 0 else {
            throw RecordingError(
                file: path,
                line: 2,
                message: "no data rows — record some data first (motion-agent record)"
            )
        }
        self.path = path
        self.realtime = realtime
        self.loop = loop
        recordedSamples = recorded.sampleCount
        recordedDuration = recorded.duration
        firstTimestamp = recorded.firstTimestamp ?? 0
        let sensors = recorded.sensors
        let rate = recorded.fastestRateHz ?? 1
        devices = [SensorDevice(id: "replay", name: "replay", sensors: sensors, supportedRates: .list([rate]))]
    }

    package var summary: String {
        "replay of \(path) (\(recordedSamples) samples, \(String(format: "%.1f", recordedDuration)) s, \(realtime ? "real time" : "as fast as possible")\(loop ? ", looping" : ""))"
    }

    package func apply(_ plan: AcquisitionPlan) throws {
        let sensors = plan.devices["replay"]?.sensors ?? []
        enabled.store(sensors.reduce(0) { $0 | Self.bit($1) }, ordering: .releasing)
    }

    @inline(__always)
    static func bit(_ sensor: SensorType) -> UInt8 {
        switch sensor {
        case .accelerometer: 1
        case .gyroscope: 2
        case .magnetometer: 4
        case .barometer: 8
        }
    }

    package func run(into sink: SampleSink) async throws {
        let stop = Atomic<Bool>(false)
        // The thread resumes the task when it ends (data over, stopped, or the file became unreadable): no
        // polling from the task side.
        let failure = await withTaskCancellationHandler {
            await withCheckedContinuation { (finished: CheckedContinuation<RecordingError?, Never>) in
                let thread = Thread { [self] in
                    do throws(RecordingError) {
                        try self.play(into: sink, stop: stop)
                        finished.resume(returning: nil)
                    } catch {
                        finished.resume(returning: error)
                    }
                }
                thread.name = "motion-agent.replay"
                thread.start()
            }
        } onCancel: {
            stop.store(true, ordering: .releasing)
        }
        if let failure { throw failure }
    }

    private func play(into sink: SampleSink, stop: borrowing Atomic<Bool>) throws(RecordingError) {
        var reader = try RecordingReader(path: path)
        let period =
            recordedDuration + (devices[0].supportedRates.maximum > 0 ? 1 / devices[0].supportedRates.maximum : 0)
        var offset = 0.0
        let startWall = WallClock.monotonicNow()
        var schedule = ReplayDeliverySchedule()
        repeat {
            var played = 0
            while var sample = try reader.next() {
                played += 1
                if stop.load(ordering: .relaxed) { return }
                sample.timestamp += offset
                if realtime,
                    let wake = schedule.wakeTime(forSampleDueAt: startWall + (sample.timestamp - firstTimestamp))
                {
                    var now = WallClock.monotonicNow()
                    while now < wake {
                        if stop.load(ordering: .relaxed) { return }
                        Self.sleep(until: min(wake, now + Self.longestSleep))
                        now = WallClock.monotonicNow()
                    }
                    schedule.woke(at: now)
                }
                let sensors = enabled.load(ordering: .acquiring)
                if sensors & Self.bit(.accelerometer) == 0 { sample.acceleration = nil }
                if sensors & Self.bit(.gyroscope) == 0 { sample.rotationRate = nil }
                if sensors & Self.bit(.magnetometer) == 0 { sample.magneticField = nil }
                if sensors & Self.bit(.barometer) == 0 {
                    sample.pressureKPa = nil
                    sample.temperatureC = nil
                }
                if sample.acceleration != nil || sample.rotationRate != nil || sample.magneticField != nil
                    || sample.pressureKPa != nil
                {
                    sink.ingest(sample)
                }
            }
            guard played > 0 else {
                throw RecordingError(
                    file: path,
                    line: reader.lineNumber,
                    message: "no data rows any more — the file changed while it was replayed; restore it or restart"
                )
            }
            offset += period
            if loop { try reader.rewind() }
        } while loop
    }

    /// Sleeps until monotonic time `deadline` (s): an absolute deadline, so the schedule does not drift.
    private static func sleep(until deadline: Double) {
        #if canImport(Glibc)
        let seconds = deadline.rounded(.down)
        var ts = timespec(tv_sec: Int(seconds), tv_nsec: Int((deadline - seconds) * 1e9))
        // A signal ends the sleep early with EINTR; the absolute deadline is still the right one.
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
        #else
        let remaining = deadline - WallClock.monotonicNow()
        if remaining > 0 { Thread.sleep(forTimeInterval: remaining) }
        #endif
    }
}
