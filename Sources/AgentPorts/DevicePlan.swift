import MotionModel

/// What a device runs: its sampling rate and the sensors it must deliver. An empty `sensors` set means
/// the device is switched off (buffer disabled).
package struct DevicePlan: Sendable, Hashable {
    package var rateHz: Double
    package var sensors: Set<SensorType>

    package init(rateHz: Double, sensors: Set<SensorType>) {
        self.rateHz = rateHz
        self.sensors = sensors
    }

    package static let off = DevicePlan(rateHz: 0, sensors: [])
    package var isOff: Bool { sensors.isEmpty }
}
