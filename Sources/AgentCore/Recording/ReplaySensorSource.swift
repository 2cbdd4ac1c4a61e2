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
/// It presents one device (`replay`) whose only rate is the recording's; streams asking for less are decimated
/// by the hub as with hardware. Sensors the plan switches off are blanked from the samples. With `loop`, the
/// recording starts over with timestamps continuing, so consumers never see time go backwards. In real time
/// the samples come in batches, as from a hardware FIFO (`ReplayDeliverySchedule`).
public final class ReplaySensorSource: SensorSource {
    public let recording: Recording
    public let path: String
    public let realtime: Bool
    public let loop: Bool
    public let devices: [SensorDevice]
    /// The planned sensors as a bit mask (`Self.bit`): read once per sample without a lock.
    private let enabled = Atomic<UInt8>(0)
    /// Longest single sleep, s, so a stop is seen soon even in a recording with long gaps.
    static let longestSleep = 0.05

    public init(path: String, realtime: Bool, loop: Bool) throws(RecordingError) {
        recording = try Recording(contentsOf: path)
        guard !recording.samples.isEmpty else {
            throw RecordingError(
                file: path,
                line: 2,
                message: "no data rows — record some data first (motion-agent record)"
            )
        }
        self.path = path
        self.realtime = realtime
        self.loop = loop
        let loaded = recording
        let sensors = loaded.sensors
        let rate = sensors.compactMap { loaded.rateHz(of: $0) }.max() ?? 1
        devices = [SensorDevice(id: "replay", name: "replay", sensors: sensors, supportedRates: .list([rate]))]
    }

    public var summary: String {
        "replay of \(path) (\(recording.samples.count) samples, \(String(format: "%.1f", recording.duration)) s, \(realtime ? "real time" : "as fast as possible")\(loop ? ", looping" : ""))"
    }

    public func apply(_ plan: AcquisitionPlan) throws {
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

    public func run(into sink: SampleSink) async throws {
        let stop = Atomic<Bool>(false)
        // The thread resumes the task when it ends (data over, or stopped): no polling from the task side.
        await withTaskCancellationHandler {
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                let thread = Thread { [self] in
                    self.play(into: sink, stop: stop)
                    finished.resume()
                }
                thread.name = "motion-agent.replay"
                thread.start()
            }
        } onCancel: {
            stop.store(true, ordering: .releasing)
        }
    }

    private func play(into sink: SampleSink, stop: borrowing Atomic<Bool>) {
        let samples = recording.samples
        let period =
            recording.duration + (devices[0].supportedRates.maximum > 0 ? 1 / devices[0].supportedRates.maximum : 0)
        var offset = 0.0
        let startWall = WallClock.monotonicNow()
        let firstTimestamp = samples[0].timestamp
        var schedule = ReplayDeliverySchedule()
        repeat {
            for var sample in samples {
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
            offset += period
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
