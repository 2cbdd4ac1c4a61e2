/// The physical sensors an IMU board carries. Streams name what they need from this list; the hub
/// switches off what no stream needs.
public enum SensorType: String, CaseIterable, Sendable, Hashable, Codable {
    case accelerometer
    case gyroscope
    case magnetometer
    case barometer
}
