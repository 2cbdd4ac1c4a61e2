import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tilt: the direction of gravity in the device left a cone of `coneHalfAngleDegrees` around the reference
/// direction (`isTilted`), or came back inside `coneHalfAngleDegrees − hysteresisDegrees`.
///
/// Gravity is the acceleration low-passed with `gravityTimeConstantSeconds`; with a gyroscope it is first turned
/// with the device's rotation every sample (a world vector seen from a frame turning at ω changes as −ω × g), so a
/// fast turn is followed at once and a shake or a bump, which does not rotate the device, is smoothed away. The
/// reference is `referenceGravity` (a direction in device axes, Core Motion's sign: face up is (0, 0, −1)), or
/// when nil the gravity estimated over the first `gravityTimeConstantSeconds` × 3 after the start.
package struct TiltDetector: Sendable {
    package struct Settings: Sendable, Equatable {
        /// Half-angle of the cone around the reference, degrees.
        package var coneHalfAngleDegrees: Double
        /// How far back inside the cone the tilt must come before it counts as back, degrees.
        package var hysteresisDegrees: Double
        /// The reference direction of gravity in device axes (any length but zero); nil: gravity at the start.
        package var referenceGravity: Vector3?
        /// Time constant of the gravity estimate, s.
        package var gravityTimeConstantSeconds: Double

        package init(
            coneHalfAngleDegrees: Double,
            hysteresisDegrees: Double,
            referenceGravity: Vector3?,
            gravityTimeConstantSeconds: Double
        ) {
            self.coneHalfAngleDegrees = coneHalfAngleDegrees
            self.hysteresisDegrees = hysteresisDegrees
            self.referenceGravity = referenceGravity
            self.gravityTimeConstantSeconds = gravityTimeConstantSeconds
        }

        /// A 30° cone with 5° of hysteresis around the attitude at start, gravity averaged over 0.5 s: a crate or
        /// a machine that leans 30° has tipped; walking sways a body-worn device by less than 20°.
        package static let defaults = Settings(
            coneHalfAngleDegrees: 30,
            hysteresisDegrees: 5,
            referenceGravity: nil,
            gravityTimeConstantSeconds: 0.5
        )
    }

    package private(set) var settings: Settings
    /// The reference direction, unit length; nil until it is known.
    package private(set) var reference: Vector3?
    /// Whether the tilt is outside the cone.
    package private(set) var isTilted = false
    /// The current gravity estimate, g (Core Motion's sign); zero before the first sample.
    package private(set) var gravity = Vector3.zero
    private var start: Double?
    private var lastTimestamp = -Double.infinity
    /// cos of the cone's half-angle, and of the half-angle minus the hysteresis.
    private var cosCone: Double
    private var cosBack: Double

    package init(settings: Settings = .defaults) {
        self.settings = settings
        cosCone = cos(settings.coneHalfAngleDegrees * Double.pi / 180)
        cosBack = cos(max(settings.coneHalfAngleDegrees - settings.hysteresisDegrees, 0) * Double.pi / 180)
        if let r = settings.referenceGravity, r.isFinite, r.norm > 0 { reference = r.normalized }
    }

    /// A new cone and hysteresis from the next sample on; the reference and whether the device is tilted now stay
    /// (a tilt outside the new cone is reported by the next sample, one back inside it likewise).
    mutating func setCone(halfAngleDegrees: Double, hysteresisDegrees: Double) {
        settings.coneHalfAngleDegrees = halfAngleDegrees
        settings.hysteresisDegrees = hysteresisDegrees
        cosCone = cos(halfAngleDegrees * Double.pi / 180)
        cosBack = cos(max(halfAngleDegrees - hysteresisDegrees, 0) * Double.pi / 180)
    }

    /// The direction of gravity in device axes for a device whose attitude (device → a Z-up reference frame) is
    /// `attitude`: what a tilt reference given as an attitude means.
    package static func gravity(inAttitude attitude: Quaternion) -> Vector3 {
        attitude.normalized.inverseRotate(Vector3(0, 0, -1))
    }

    /// Makes `direction` (device axes) the reference from now on; the tilt is judged against it at the next sample.
    package mutating func setReference(_ direction: Vector3) {
        guard direction.isFinite, direction.norm > 0 else { return }
        reference = direction.normalized
    }

    /// The angle between the current gravity estimate and the reference, rad; nil before both are known.
    package var angle: Double? {
        guard let r = reference, gravity.norm > 0 else { return nil }
        return acos(min(max(gravity.normalized.dot(r), -1), 1))
    }

    /// Feeds one sample (g, rad/s or nil, s); returns a tilt event when the cone was left or re-entered.
    package mutating func update(timestamp t: Double, acceleration a: Vector3, rotationRate: Vector3?) -> TiltEvent? {
        guard t.isFinite, a.isFinite else { return nil }
        let dt = t - lastTimestamp
        if start == nil || !(dt > 0) || dt > 1 {
            // The first sample, or a gap or a step back in time: start the estimate again from this sample.
            if start == nil { start = t }
            gravity = a
        } else {
            if let w = rotationRate, w.isFinite { gravity -= w.cross(gravity) * dt }
            gravity += (a - gravity) * (dt / (settings.gravityTimeConstantSeconds + dt))
        }
        lastTimestamp = t
        if reference == nil, let s = start, t - s >= 3 * settings.gravityTimeConstantSeconds, gravity.norm > 0 {
            reference = gravity.normalized
        }
        // Compared as cosines, so the per-sample cost is a dot product; the angle is computed only for an event.
        guard let r = reference else { return nil }
        let n = gravity.norm
        guard n > 0 else { return nil }
        let c = gravity.dot(r) / n
        if !isTilted, c < cosCone {
            isTilted = true
            return TiltEvent(date: t, isTilted: true, angle: acos(min(max(c, -1), 1)))
        }
        if isTilted, c > cosBack {
            isTilted = false
            return TiltEvent(date: t, isTilted: false, angle: acos(min(max(c, -1), 1)))
        }
        return nil
    }
}
