/// One processed device-motion sample, Core Motion's `CMDeviceMotion`, in its conventions and units.
///
/// - `attitude`: device → reference frame (`referenceFrame`); a vector `v` in device axes is
///   `attitude.rotate(v)` in reference axes.
/// - `rotationRate`: rad/s about the device axes, gyroscope bias removed.
/// - `gravity`: g in device axes, `attitude⁻¹ ⊗ (0, 0, −1) ⊗ attitude` — (0, 0, −1) lying face up.
/// - `userAcceleration`: g in device axes; `gravity + userAcceleration` is the accelerometer reading.
/// - `magneticField`: µT in device axes, hard and soft iron removed as far as `magneticFieldAccuracy` says.
/// - `heading`: degrees clockwise from north of the device's +y axis (its top edge) projected on the
///   horizontal plane, in [0, 360) in the north-referenced frames, −1 in the arbitrary ones.
/// - `timestamp`: seconds on the sensor clock, the gyroscope sample's.
/// - `relativeAttitude`: `attitude` relative to the reference attitude while one is set
///   (`set-reference-attitude`), nil otherwise; `attitude` stays absolute.
public struct DeviceMotion: Sendable, Hashable, Codable {
    public var timestamp: Double
    public var attitude: Quaternion
    public var rotationRate: Vector3
    public var gravity: Vector3
    public var userAcceleration: Vector3
    public var magneticField: Vector3
    public var magneticFieldAccuracy: MagneticFieldAccuracy
    public var heading: Double
    public var referenceFrame: AttitudeReferenceFrame
    public var relativeAttitude: RelativeAttitude? = nil

    @inlinable
    public init(
        timestamp: Double,
        attitude: Quaternion,
        rotationRate: Vector3,
        gravity: Vector3,
        userAcceleration: Vector3,
        magneticField: Vector3,
        magneticFieldAccuracy: MagneticFieldAccuracy,
        heading: Double,
        referenceFrame: AttitudeReferenceFrame
    ) {
        self.timestamp = timestamp
        self.attitude = attitude
        self.rotationRate = rotationRate
        self.gravity = gravity
        self.userAcceleration = userAcceleration
        self.magneticField = magneticField
        self.magneticFieldAccuracy = magneticFieldAccuracy
        self.heading = heading
        self.referenceFrame = referenceFrame
    }

    /// The attitude as a rotation matrix (device → reference, see `RotationMatrix`).
    @inlinable public var rotationMatrix: RotationMatrix { RotationMatrix(attitude) }
    /// Rotation about the device's y axis, rad, in [−π, π] (see `Quaternion.roll`).
    @inlinable public var roll: Double { attitude.roll }
    /// Rotation about the device's x axis, rad, in [−π/2, π/2] (see `Quaternion.pitch`).
    @inlinable public var pitch: Double { attitude.pitch }
    /// Rotation about the vertical, rad, in [−π, π] (see `Quaternion.yaw`).
    @inlinable public var yaw: Double { attitude.yaw }
}
