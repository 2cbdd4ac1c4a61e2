import MotionModel

/// The hub's decision for every device, keyed by `SensorDevice.id`.
public struct AcquisitionPlan: Sendable, Hashable {
    public var devices: [String: DevicePlan]

    public init(devices: [String: DevicePlan] = [:]) {
        self.devices = devices
    }
}
