import MotionModel

/// The hardware port: a simulated IMU, IIO devices, or a replayed recording.
package protocol SensorSource: AnyObject, Sendable {
    /// A short human description for the log and status, e.g. `simulated (scenario walking, seed 1)`.
    var summary: String { get }
    /// The devices found, with the sensors and rates each offers.
    var devices: [SensorDevice] { get }
    /// Applies a new plan: rates and enabled sensors per device; devices absent from the plan are off.
    /// Called from the control path (start, stop, rate changes), never per sample. Safe while running.
    func apply(_ plan: AcquisitionPlan) throws
    /// Acquires until the calling task is cancelled (or, for a finite source such as a replay, until the
    /// data ends), delivering every sample to `sink` from the source's own thread.
    func run(into sink: SampleSink) async throws
    /// Per-device acquisition counters keyed by `SensorDevice.id`, read once per metrics interval (never per
    /// sample). Sources without hardware to count have none.
    func deviceCounters() -> [String: SensorDeviceCounters]
}

extension SensorSource {
    package func deviceCounters() -> [String: SensorDeviceCounters] { [:] }
}
