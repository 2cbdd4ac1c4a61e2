import MotionModel

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
