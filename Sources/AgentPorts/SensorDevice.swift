import MotionModel

/// One physical sensor device as the hardware presents it: one acquisition loop, one sampling rate.
///
/// An IIO board may show several (inv_icm42600 shows accel and gyro as two devices; a magnetometer and a
/// barometer are separate chips); the simulator shows one.
package struct SensorDevice: Sendable, Hashable {
    /// Stable identifier used in plans and status, e.g. `iio:device0` or `simulated`.
    package var id: String
    /// The driver's or model's name, e.g. `bmi160`.
    package var name: String
    /// The sensors this device feeds.
    package var sensors: Set<SensorType>
    /// The sampling rates the hardware accepts.
    package var supportedRates: SupportedRates

    package init(id: String, name: String, sensors: Set<SensorType>, supportedRates: SupportedRates) {
        self.id = id
        self.name = name
        self.sensors = sensors
        self.supportedRates = supportedRates
    }
}
