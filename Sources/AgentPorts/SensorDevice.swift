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
