/// A stream has one name everywhere: config key, topic, control command. What else there is to know about a
/// stream — its topics, payloads, defaults, sensors, schema, Home Assistant entities — is its `descriptor`.
public enum StreamName: String, Sendable, Hashable, CaseIterable, Codable, Comparable {
    case accelerometer
    case gyroscope
    case magnetometer
    case deviceMotion = "device-motion"
    case pedometer
    case activity
    case altimeter
    case submersion

    /// Everything about this stream (`StreamDescriptor.table`).
    public var descriptor: StreamDescriptor { StreamDescriptor.of(self) }

    /// The streams that publish a sensor's samples as they come, without estimation.
    public var isRawSensor: Bool { descriptor.isRawSensor }

    /// The streams that publish one message per sample and can therefore batch samples.
    public var canBatch: Bool { descriptor.batches }

    public static func < (a: StreamName, b: StreamName) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// Every stream's settings when config.yaml says nothing.
    public static var defaultSettings: [StreamName: StreamSettings] {
        Dictionary(uniqueKeysWithValues: StreamDescriptor.table.map { ($0.name, $0.defaults) })
    }
}
