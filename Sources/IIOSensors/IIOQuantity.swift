internal import CLibIIO
import MotionModel

/// What an IIO channel measures, among the quantities the agent reads, with the conversion from the
/// kernel's unit (sysfs-bus-iio) to the agent's.
package enum IIOQuantity: String, Sendable, Hashable, CaseIterable {
    /// `in_accel_*`: m/s², specific force (+9.81 on the up axis at rest).
    case acceleration
    /// `in_anglvel_*`: rad/s.
    case angularVelocity
    /// `in_magn_*`: Gauss.
    case magneticField
    /// `in_pressure*`: kPa.
    case pressure
    /// `in_temp*`: milli °C.
    case temperature
    /// `in_timestamp`: ns on the device's `current_timestamp_clock`.
    case timestamp

    init?(_ type: iio_chan_type) {
        switch type {
        case IIO_ACCEL: self = .acceleration
        case IIO_ANGL_VEL: self = .angularVelocity
        case IIO_MAGN: self = .magneticField
        case IIO_PRESSURE: self = .pressure
        case IIO_TEMP: self = .temperature
        case IIO_TIMESTAMP: self = .timestamp
        default: return nil
        }
    }

    /// The sensor this quantity feeds; temperature rides along with whatever device carries it.
    package var sensor: SensorType? {
        switch self {
        case .acceleration: .accelerometer
        case .angularVelocity: .gyroscope
        case .magneticField: .magnetometer
        case .pressure: .barometer
        case .temperature, .timestamp: nil
        }
    }

    /// Whether x, y and z channels make one vector.
    var isVector: Bool { self == .acceleration || self == .angularVelocity || self == .magneticField }

    /// Multiplies a kernel value into the agent's unit.
    /// - acceleration: m/s² → g with Core Motion's sign, `−a / 9.80665` (foundation issue; IMUSample docs);
    /// - magnetic field: Gauss → µT, × 100 (1 G = 100 µT);
    /// - temperature: m°C → °C, ÷ 1000;
    /// - angular velocity (rad/s) and pressure (kPa) are already the agent's units.
    package var agentUnitFactor: Double {
        switch self {
        case .acceleration: -1 / standardGravity
        case .angularVelocity, .pressure, .timestamp: 1
        case .magneticField: 100
        case .temperature: 0.001
        }
    }

    /// The channel type as sysfs spells it (`in_accel_x_raw`).
    package var sysfsType: String {
        switch self {
        case .acceleration: "accel"
        case .angularVelocity: "anglvel"
        case .magneticField: "magn"
        case .pressure: "pressure"
        case .temperature: "temp"
        case .timestamp: "timestamp"
        }
    }

    /// The kernel's unit, for listings.
    package var kernelUnit: String {
        switch self {
        case .acceleration: "m/s²"
        case .angularVelocity: "rad/s"
        case .magneticField: "G"
        case .pressure: "kPa"
        case .temperature: "m°C"
        case .timestamp: "ns"
        }
    }

    /// The agent's stream this channel feeds, for `list-sensors`.
    package var stream: String {
        switch self {
        case .acceleration: "accelerometer"
        case .angularVelocity: "gyroscope"
        case .magneticField: "magnetometer"
        case .pressure: "altimeter"
        case .temperature: "temperature (carried in samples)"
        case .timestamp: "sample time"
        }
    }
}
