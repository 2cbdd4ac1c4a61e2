import MotionModel

/// A mount matrix from the configuration, for boards whose driver exposes none (or a wrong one). It wins over
/// what the driver reports.
package struct MountMatrixOverride: Sendable, Hashable {
    /// An IIO device id (`iio:device2`) or driver name (`ak8975`).
    package var device: String
    /// The sensor it applies to; nil for every vector sensor of the device.
    package var sensor: SensorType?
    package var matrix: MountMatrix

    package init(device: String, sensor: SensorType? = nil, matrix: MountMatrix) {
        self.device = device
        self.sensor = sensor
        self.matrix = matrix
    }

    func matches(deviceID: String, name: String, sensor: SensorType) -> Bool {
        (device == deviceID || device == name) && (self.sensor == nil || self.sensor == sensor)
    }
}
