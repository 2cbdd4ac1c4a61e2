import MotionModel

/// What `AttitudeFilter` learns slowly and the agent keeps across restarts: the gyroscope bias with its
/// uncertainty and the magnetic reference. Attitude itself is not kept (the device may have moved).
package struct AttitudeFilterState: Sendable, Hashable, Codable {
    /// Gyroscope bias, rad/s, device axes.
    package var gyroscopeBias: Vector3
    /// Standard deviation of the bias estimate, rad/s.
    package var gyroscopeBiasSigma: Double
    /// Norm of the accepted magnetic reference field, in the magnetometer's unit; 0 when none was accepted.
    package var magneticReferenceNorm: Double
    /// Dip (inclination) of the accepted reference field, rad, positive when the field points down.
    package var magneticReferenceDip: Double

    package init(
        gyroscopeBias: Vector3,
        gyroscopeBiasSigma: Double,
        magneticReferenceNorm: Double,
        magneticReferenceDip: Double
    ) {
        self.gyroscopeBias = gyroscopeBias
        self.gyroscopeBiasSigma = gyroscopeBiasSigma
        self.magneticReferenceNorm = magneticReferenceNorm
        self.magneticReferenceDip = magneticReferenceDip
    }
}
