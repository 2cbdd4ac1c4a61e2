import MotionModel

/// The hub's decision for every device, keyed by `SensorDevice.id`.
package struct AcquisitionPlan: Sendable, Hashable {
    package var devices: [String: DevicePlan]

    package init(devices: [String: DevicePlan] = [:]) {
        self.devices = devices
    }
}
