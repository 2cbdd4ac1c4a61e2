/// A stream has one name everywhere: config key, topic, control command.
public enum StreamName: String, Sendable, Hashable, CaseIterable, Codable, Comparable {
    case accelerometer
    case gyroscope
    case magnetometer
    case deviceMotion = "device-motion"
    case pedometer
    case activity
    case altimeter
    case submersion

    /// The streams that publish a sensor's samples as they come, without estimation.
    public var isRawSensor: Bool { self == .accelerometer || self == .gyroscope || self == .magnetometer }

    public static func < (a: StreamName, b: StreamName) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    public static var defaultSettings: [StreamName: StreamSettings] {
        [
            .accelerometer: StreamSettings(enabled: true, rateHz: 50, qos: 0, retain: false),
            .gyroscope: StreamSettings(enabled: true, rateHz: 50, qos: 0, retain: false),
            .magnetometer: StreamSettings(enabled: true, rateHz: 25, qos: 0, retain: false),
            .deviceMotion: StreamSettings(enabled: true, rateHz: 50, qos: 0, retain: false),
            // Event streams: rate_hz caps how often a changing value is published; state-like, so retained
            // at QoS 1 (a new dashboard sees the current count and activity at once).
            .pedometer: StreamSettings(enabled: true, rateHz: 1, qos: 1, retain: true),
            .activity: StreamSettings(enabled: true, rateHz: 1, qos: 1, retain: true),
            .altimeter: StreamSettings(enabled: true, rateHz: 1, qos: 0, retain: false),
            // Off by default: most boards are not water-rated, and a barometer in a sealed case reads depth wrong.
            .submersion: StreamSettings(enabled: false, rateHz: 1, qos: 1, retain: true),
        ]
    }
}

extension StreamName {
    /// The streams that publish one message per sample and can therefore batch samples.
    public var canBatch: Bool { isRawSensor || self == .deviceMotion }
}
