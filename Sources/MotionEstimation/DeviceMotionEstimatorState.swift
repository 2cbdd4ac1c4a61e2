/// What `DeviceMotionEstimator` keeps across restarts (the agent writes it to its state directory).
package struct DeviceMotionEstimatorState: Sendable, Hashable, Codable {
    package var filter: AttitudeFilterState
    package var magnetometer: MagnetometerCalibrationState

    package init(filter: AttitudeFilterState, magnetometer: MagnetometerCalibrationState) {
        self.filter = filter
        self.magnetometer = magnetometer
    }
}
