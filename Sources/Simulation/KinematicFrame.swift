import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A rigid frame moving in the world (North-West-Up): where it is, how it is turned, and the first two
/// derivatives of both, all in world axes.
///
/// Scenarios build the device's frame as a chain — the body moving along its path, turned to its
/// heading, the thigh or hand swinging about a joint, the phone's mount — and each link applies the
/// rigid-body transport rules, so the device's angular rate and acceleration are exact consequences of
/// the chain (the gyroscope integrates to the attitude, the accelerometer double-integrates to the
/// position).
///
/// Only the vertical position is tracked (it is what the barometer senses); horizontal motion is carried
/// by velocity and acceleration.
struct KinematicFrame: Sendable {
    /// Frame → world.
    var attitude: Quaternion
    /// rad/s, world axes.
    var angularVelocity: Vector3
    /// rad/s², world axes.
    var angularAcceleration: Vector3
    /// Height of the frame's origin, m (world z).
    var altitude: Double
    /// m/s, world axes.
    var velocity: Vector3
    /// m/s², world axes (kinematic, without gravity).
    var acceleration: Vector3

    /// A frame aligned with the world axes whose origin moves with the given world velocity and
    /// acceleration at the given altitude.
    init(altitude: Double, velocity: Vector3 = .zero, acceleration: Vector3 = .zero) {
        attitude = .identity
        angularVelocity = .zero
        angularAcceleration = .zero
        self.altitude = altitude
        self.velocity = velocity
        self.acceleration = acceleration
    }

    /// The origin moving along a horizontal path: `distance` (its derivatives are speed and tangential
    /// acceleration) travelled in direction `heading` (rad, counter-clockwise from north about up), at
    /// `altitude`.
    static func path(distance s: Jet, heading psi: Jet, altitude z: Jet) -> KinematicFrame {
        let c = cos(psi.v)
        let sn = sin(psi.v)
        let velocity = Vector3(s.d * c, s.d * sn, z.d)
        // a = s̈ t̂ + ṡ ψ̇ n̂, with t̂ = (cos ψ, sin ψ) and n̂ = (−sin ψ, cos ψ).
        let acceleration = Vector3(
            s.dd * c - s.d * psi.d * sn,
            s.dd * sn + s.d * psi.d * c,
            z.dd
        )
        return KinematicFrame(altitude: z.v, velocity: velocity, acceleration: acceleration)
    }

    /// The child frame turned by `angle` about `axis`, an axis fixed in this frame (a hinge).
    @inline(__always)
    func rotated(about axis: Vector3, by angle: Jet) -> KinematicFrame {
        var child = self
        child.attitude = attitude * Quaternion(axis: axis, angle: angle.v)
        let axisWorld = attitude.rotate(axis.normalized)
        let omegaRel = axisWorld * angle.d
        child.angularVelocity = angularVelocity + omegaRel
        // The hinge axis turns with this frame: d/dt(â θ̇) = (ω × â) θ̇ + â θ̈.
        child.angularAcceleration = angularAcceleration + angularVelocity.cross(omegaRel) + axisWorld * angle.dd
        return child
    }

    /// The child frame turned by a constant rotation (a mount).
    @inline(__always)
    func rotated(by constant: Quaternion) -> KinematicFrame {
        var child = self
        child.attitude = attitude * constant
        return child
    }

    /// The child frame whose origin sits at `offset` in this frame's axes; the offset may itself move
    /// (each component a `Jet`).
    @inline(__always)
    func translated(by offset: JetVector) -> KinematicFrame {
        var child = self
        let r = attitude.rotate(offset.value)
        let rDot = attitude.rotate(offset.rate)
        let rDDot = attitude.rotate(offset.acceleration)
        let w = angularVelocity
        child.altitude = altitude + r.z
        // Transport theorem for a point moving in a rotating frame.
        child.velocity = velocity + w.cross(r) + rDot
        child.acceleration =
            acceleration + angularAcceleration.cross(r) + w.cross(w.cross(r))
            + 2 * w.cross(rDot) + rDDot
        return child
    }

    /// The child frame at a fixed offset in this frame's axes.
    @inline(__always)
    func translated(by offset: Vector3) -> KinematicFrame {
        translated(by: JetVector(Jet(offset.x), Jet(offset.y), Jet(offset.z)))
    }
}
