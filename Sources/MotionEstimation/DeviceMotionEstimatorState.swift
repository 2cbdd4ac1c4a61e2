/// What `DeviceMotionEstimator` keeps across restarts (the agent writes it to its state directory).
public struct DeviceMotionEstimatorState: Sendable, Hashable, Codable {
    public var filter: AttitudeFilterState
    public var magnetometer: MagnetometerCalibrationState

    public init(filter: AttitudeFilterState, magnetometer: MagnetometerCalibrationState) {
        self.filter = filter
        self.magnetometer = magnetometer
    }
}
