import MotionModel

/// What `AttitudeFilter` learns slowly and the agent keeps across restarts: the gyroscope bias with its
/// uncertainty and the magnetic reference. Attitude itself is not kept (the device may have moved).
public struct AttitudeFilterState: Sendable, Hashable, Codable {
    /// Gyroscope bias, rad/s, device axes.
    public var gyroscopeBias: Vector3
    /// Standard deviation of the bias estimate, rad/s.
    public var gyroscopeBiasSigma: Double
    /// Norm of the accepted magnetic reference field, in the magnetometer's unit; 0 when none was accepted.
    public var magneticReferenceNorm: Double
    /// Dip (inclination) of the accepted reference field, rad, positive when the field points down.
    public var magneticReferenceDip: Double

    public init(
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
