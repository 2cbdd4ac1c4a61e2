import MotionModel

/// One physical sensor device as the hardware presents it: one acquisition loop, one sampling rate.
///
/// An IIO board may show several (inv_icm42600 shows accel and gyro as two devices; a magnetometer and a
/// barometer are separate chips); the simulator shows one.
public struct SensorDevice: Sendable, Hashable {
    /// Stable identifier used in plans and status, e.g. `iio:device0` or `simulated`.
    public var id: String
    /// The driver's or model's name, e.g. `bmi160`.
    public var name: String
    /// The sensors this device feeds.
    public var sensors: Set<SensorType>
    /// The sampling rates the hardware accepts.
    public var supportedRates: SupportedRates

    public init(id: String, name: String, sensors: Set<SensorType>, supportedRates: SupportedRates) {
        self.id = id
        self.name = name
        self.sensors = sensors
        self.supportedRates = supportedRates
    }
}

/// What a device runs: its sampling rate and the sensors it must deliver. An empty `sensors` set means
/// the device is switched off (buffer disabled).
public struct DevicePlan: Sendable, Hashable {
    public var rateHz: Double
    public var sensors: Set<SensorType>

    public init(rateHz: Double, sensors: Set<SensorType>) {
        self.rateHz = rateHz
        self.sensors = sensors
    }

    public static let off = DevicePlan(rateHz: 0, sensors: [])
    public var isOff: Bool { sensors.isEmpty }
}

/// The hub's decision for every device, keyed by `SensorDevice.id`.
public struct AcquisitionPlan: Sendable, Hashable {
    public var devices: [String: DevicePlan]

    public init(devices: [String: DevicePlan] = [:]) {
        self.devices = devices
    }
}

/// A problem the source met while acquiring; the source keeps going (or retries) and reports it here so
/// status and the log can say so.
public struct SourceFault: Sendable, Hashable {
    public var deviceID: String
    public var message: String
    /// `false` while the device is failing, `true` once it delivers again.
    public var recovered: Bool

    public init(deviceID: String, message: String, recovered: Bool) {
        self.deviceID = deviceID
        self.message = message
        self.recovered = recovered
    }
}

/// Where a source hands its samples. Called on the source's acquisition thread, for every sample, in
/// timestamp order per device; implementations must not block and must not allocate per sample.
public protocol SampleSink: AnyObject, Sendable {
    func ingest(_ sample: IMUSample)
    func report(_ fault: SourceFault)
}

/// The hardware port: a simulated IMU, IIO devices, or a replayed recording.
public protocol SensorSource: AnyObject, Sendable {
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
    public func deviceCounters() -> [String: SensorDeviceCounters] { [:] }
}
