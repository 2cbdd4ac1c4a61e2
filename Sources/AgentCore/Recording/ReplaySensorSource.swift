import Foundation
import MotionModel
import Synchronization

/// Plays a recording through the whole pipeline, at its recorded pace or as fast as the sink takes it.
///
/// It presents one device (`replay`) whose only rate is the recording's; streams asking for less are decimated
/// by the hub as with hardware. Sensors the plan switches off are blanked from the samples. With `loop`, the
/// recording starts over with timestamps continuing, so consumers never see time go backwards.
public final class ReplaySensorSource: SensorSource {
    public let recording: Recording
    public let path: String
    public let realtime: Bool
    public let loop: Bool
    public let devices: [SensorDevice]
    private let enabled = Mutex<Set<SensorType>>([])

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
        enabled.withLock { $0 = sensors }
    }

    public func run(into sink: SampleSink) async throws {
        let done = Atomic<Bool>(false)
        let stop = Atomic<Bool>(false)
        let thread = Thread { [self] in
            self.play(into: sink, stop: stop)
            done.store(true, ordering: .releasing)
        }
        thread.name = "motion-agent.replay"
        await withTaskCancellationHandler {
            thread.start()
            while !done.load(ordering: .acquiring) {
                try? await Task.sleep(for: .milliseconds(20))
                if Task.isCancelled { break }
            }
        } onCancel: {
            stop.store(true, ordering: .releasing)
        }
        stop.store(true, ordering: .releasing)
        while !done.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(5)) }
    }

    private func play(into sink: SampleSink, stop: borrowing Atomic<Bool>) {
        let samples = recording.samples
        let period =
            recording.duration + (devices[0].supportedRates.maximum > 0 ? 1 / devices[0].supportedRates.maximum : 0)
        var offset = 0.0
        let startWall = WallClock.monotonicNow()
        let firstTimestamp = samples[0].timestamp
        repeat {
            for var sample in samples {
                if stop.load(ordering: .relaxed) { return }
                let sensors = enabled.withLock { $0 }
                if !sensors.contains(.accelerometer) { sample.acceleration = nil }
                if !sensors.contains(.gyroscope) { sample.rotationRate = nil }
                if !sensors.contains(.magnetometer) { sample.magneticField = nil }
                if !sensors.contains(.barometer) {
                    sample.pressureKPa = nil
                    sample.temperatureC = nil
                }
                sample.timestamp += offset
                if realtime {
                    let due = startWall + (sample.timestamp - firstTimestamp)
                    let wait = due - WallClock.monotonicNow()
                    if wait > 0 { Thread.sleep(forTimeInterval: wait) }
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
}
