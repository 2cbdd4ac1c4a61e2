#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Core Motion's roll, pitch and yaw.
///
/// Core Motion names pitch the rotation about the device's x axis, roll about its y axis and yaw about the
/// vertical. The sequence is intrinsic z-x′-y″ (yaw, then pitch, then roll): the attitude matrix is
/// `R = Rz(yaw) · Rx(pitch) · Ry(roll)`, which gives each angle in closed form from the matrix of the
/// quaternion: pitch = asin(m32) ∈ [−π/2, π/2], roll = atan2(−m31, m33) ∈ [−π, π],
/// yaw = atan2(−m12, m22) ∈ [−π, π]. With this sequence the yaw is the direction of the device's y axis
/// projected on the horizontal plane (counter-clockwise from the frame's x axis, minus 90°), which is what
/// a compass heading needs, and it stays defined for any tilt short of the y axis pointing straight up or
/// down. At pitch ±90° (gimbal lock) roll and yaw share one degree of freedom: roll is reported as 0 and
/// the whole rotation about the vertical goes to yaw.
extension Quaternion {
    /// Rotation about the device's y axis, rad, in [−π, π].
    @inlinable
    public var roll: Double { eulerAngles.roll }

    /// Rotation about the device's x axis, rad, in [−π/2, π/2].
    @inlinable
    public var pitch: Double { eulerAngles.pitch }

    /// Rotation about the reference frame's vertical z axis, rad, in [−π, π], counter-clockwise seen from above.
    @inlinable
    public var yaw: Double { eulerAngles.yaw }

    /// Roll, pitch and yaw in one pass (rad), z-x′-y″ as documented on this extension.
    @inlinable
    public var eulerAngles: (roll: Double, pitch: Double, yaw: Double) {
        let m = RotationMatrix(self)
        let sinPitch = Swift.max(-1, Swift.min(1, m.m32))
        // Below this distance from ±1, cos(pitch) ~ 1e-6 and the two atan2 arguments are noise.
        if abs(sinPitch) > 1 - 5e-13 {
            let pitch = sinPitch > 0 ? Double.pi / 2 : -Double.pi / 2
            return (0, pitch, atan2(m.m21, m.m11))
        }
        return (atan2(-m.m31, m.m33), asin(sinPitch), atan2(-m.m12, m.m22))
    }

    /// The attitude with these Core Motion angles (rad): `q_z(yaw) ⊗ q_x(pitch) ⊗ q_y(roll)`.
    @inlinable
    public init(roll: Double, pitch: Double, yaw: Double) {
        let qz = Quaternion(w: cos(yaw / 2), x: 0, y: 0, z: sin(yaw / 2))
        let qx = Quaternion(w: cos(pitch / 2), x: sin(pitch / 2), y: 0, z: 0)
        let qy = Quaternion(w: cos(roll / 2), x: 0, y: sin(roll / 2), z: 0)
        self = qz * qx * qy
    }

    /// The rotation by `angle` radians about the vertical z axis.
    @inlinable
    public static func aboutZ(_ angle: Double) -> Quaternion {
        Quaternion(w: cos(angle / 2), x: 0, y: 0, z: sin(angle / 2))
    }
}
