import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Moving the phone from one placement to another (out of the pocket into the hand, down onto a table,
/// into the car's tray): a single smooth turn about the fixed axis between the two attitudes and a
/// smooth straight-line move between the two positions, starting and ending at rest.
struct TransitionMotion: Sendable {
    var fromAttitude: Quaternion
    var toAttitude: Quaternion
    var fromAltitude: Double
    var toAltitude: Double
    var duration: Double
    var activity: SimulationActivity = .stationary

    /// 3 s: an unhurried hand movement (≈ 110 °/s peak for a half turn).
    static let standardDuration = 3.0

    func evaluate(at tau: Double) -> LocalMotion {
        let s = Profile.smootherstep(Jet.time(tau) * (1 / duration))
        var delta = fromAttitude.conjugate * toAttitude
        if delta.w < 0 { delta = Quaternion(w: -delta.w, x: -delta.x, y: -delta.y, z: -delta.z) }
        let angle = 2 * acos(min(1, delta.w))
        let axis = Vector3(delta.x, delta.y, delta.z)
        let altitude = s * (toAltitude - fromAltitude) + fromAltitude
        var frame = KinematicFrame.path(distance: .zero, heading: .zero, altitude: altitude)
            .rotated(by: fromAttitude)
        if axis.norm > 1e-12 {
            frame = frame.rotated(about: axis, by: s * angle)
        }
        var motion = LocalMotion(
            frame: frame,
            heading: 0,
            ground: 0,
            steps: 0,
            distance: 0,
            floorsAscended: 0,
            floorsDescended: 0,
            cadence: 0,
            speed: 0,
            activity: activity
        )
        motion.isTransition = true
        return motion
    }
}
