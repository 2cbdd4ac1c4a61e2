import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A phone in a trouser pocket, moved by the kinematic chain pelvis → hip joint → thigh → pocket → phone,
/// for `GaitStressSignal`.
///
/// - The pelvis (the hip joint's carrier) has the gait's accelerations: the vertical bounce and the heel
///   impacts of `GaitStressSignal` (this leg's strike at full strength, the other leg's as
///   `contralateralImpact` of it: a pocket on one thigh feels its own leg's strike through the femur and the
///   other's only through the pelvis), the forward surge at the step rate and the sideways sway at the stride
///   rate.
/// - The thigh swings about the hip joint once per stride. Sagittal hip flexion in level walking runs from
///   about +25–30° near this leg's heel strike to about −10° at push-off (Winter, "Biomechanics and Motor
///   Control of Human Movement", 2009; Perry & Burnfield, "Gait Analysis", 2010): a mean near +10°, a first
///   harmonic of about ±20° and a smaller second harmonic (stance extends the hip slowly, swing flexes it
///   fast). A front pocket sits on the thigh 15–20 cm below the joint and follows it whole; a back pocket
///   sits on the buttock, about 10 cm below and behind the joint, and follows the thigh only in part (the
///   gluteal surface turns with the pelvis as much as with the femur): `follow`.
/// - The pocket leg's swing: averaged over the strides of the four Oxford pocket walks (Salvi et al., EMBC
///   2018), |a| (low-passed at 3 Hz) dips once per stride, during the pocket leg's swing, 0.1–0.35 g deeper
///   than during the other leg's (the hip on the swing side drops with the pelvis's list, and the
///   thigh that carries the phone is unloaded): a stride-rate vertical acceleration of the hip joint,
///   `swingDip` g, lowest at `swingDipPhase` of the stride after this leg's strike. It is what makes one
///   step of every stride look unlike the other in |a|.
/// - Trouser motion: the phone is not fixed in the pocket. It rocks against the cloth at the stride rate
///   (`wobble`, lagging the thigh) and slowly changes its seat over tens of seconds (`drift` about the
///   thigh's sideways axis and about its length, over `driftPeriod`), so gravity's direction in device axes
///   changes with it.
///
/// Every acceleration is the exact consequence of the chain (`KinematicFrame`): the thigh's angular rate and
/// acceleration give the tangential and centripetal terms at the pocket, and the device reports the specific
/// force in its own axes.
package struct ThighPocket: Sendable, Equatable {
    /// Hip flexion, rad: mean, first harmonic, second harmonic and the second's phase (rad) over the stride.
    package var flexionMean = 0.17
    package var flexionAmplitude = 0.35
    package var flexionSecond = 0.05
    package var flexionSecondPhase = 0.8
    /// Share of the thigh's rotation the pocket follows (1 on the thigh, about 0.5 on the buttock).
    package var follow = 1.0
    /// The phone's centre relative to the hip joint in thigh axes (x forward, y left, z along the thigh,
    /// up), m.
    package var offset = Vector3(0.06, 0, -0.18)
    /// Device axes → thigh axes with the leg straight.
    package var mount = Quaternion(w: 0.5, x: 0.5, y: 0.5, z: 0.5)
    /// The other leg's heel impact as this pocket feels it, relative to its own leg's.
    package var contralateralImpact = 0.5
    /// Stride-rate vertical acceleration of the hip joint, g, lowest at `swingDipPhase` of the stride.
    package var swingDip = 0.0
    package var swingDipPhase = 0.72
    /// Forward surge (at the step rate) and sideways sway (at the stride rate) of the pelvis, g.
    package var surge = 0.12
    package var sway = 0.06
    /// Rocking of the phone in the pocket at the stride rate, rad, and its lag behind the thigh (stride
    /// fraction).
    package var wobble = 0.0
    package var wobbleLag = 0.15
    /// Slow change of the phone's seat in the pocket, rad, over `driftPeriod` s.
    package var drift = 0.0
    package var driftPeriod = 23.0
    /// A loose phone knocking against the cloth and the body: short pulses in device axes (reading units, g;
    /// 60 ms raised cosines) at fixed phases of the stride (0 at this leg's strike). A phone loose in a back
    /// pocket shows three to five |a| peaks above 2 g a stride, along different device axes (the Oxford
    /// validation set's back-pocket walk of user 1, Samsung S6 at 100 Hz: −z 2 g just after one strike, +y
    /// 2.5 g at the other, +x 2.2 g and +y 2 g 0.35 and 0.5 s later).
    package var knocks: [Knock] = []

    package struct Knock: Sendable, Equatable {
        package var phase: Double
        package var reading: Vector3

        package init(phase: Double, reading: Vector3) {
            self.phase = phase
            self.reading = reading
        }
    }

    package init() {}

    /// Left front trouser pocket: screen facing forward, top edge up toward the hip, 18 cm down the thigh.
    package static let front = ThighPocket()

    /// Left back trouser pocket: screen facing backward, top edge up, on the buttock (10 cm behind and 8 cm
    /// below the hip joint), following half of the thigh's swing, loose enough to rock and drift.
    package static var back: ThighPocket {
        var p = ThighPocket()
        p.offset = Vector3(-0.10, 0, -0.08)
        p.follow = 0.5
        // Device x right (−y), y up (z), z backward (−x).
        p.mount = ThighPocket.mount(x: Vector3(0, -1, 0), y: Vector3(0, 0, 1))
        p.contralateralImpact = 0.6
        p.wobble = 0.08
        p.drift = 0.15
        return p
    }

    /// `pocket` (front or back) holding a loose phone: it rocks and drifts in the pocket and knocks against the
    /// cloth and the body at `knocks` (the stress tests' and `motion-bench gait-grid`'s knocking pockets).
    package static func loose(_ pocket: ThighPocket, knocks: [Knock] = fourKnocks) -> ThighPocket {
        var p = pocket
        p.swingDip = 0.2
        p.wobble = 0.1
        p.drift = 0.2
        p.knocks = knocks
        return p
    }

    /// Four knocks a stride, the shape of the Oxford validation set's back-pocket walk of user 1: −z 2.5 g after
    /// this leg's strike, +y 2 g at the other's, +x 2.5 g and +y 1.5 g later in the stride.
    package static let fourKnocks: [Knock] = [
        .init(phase: 0.1, reading: Vector3(0, 0, -2.5)),
        .init(phase: 0.55, reading: Vector3(0, 2, 0)),
        .init(phase: 0.8, reading: Vector3(2.5, 0, -1)),
        .init(phase: 0.93, reading: Vector3(0, 1.5, 0)),
    ]

    /// The mount that puts device x and y along the given thigh-frame directions (z = x × y).
    package static func mount(x: Vector3, y: Vector3) -> Quaternion {
        let z = x.cross(y)
        // Rotation matrix with columns x, y, z (device axes in thigh axes) → quaternion.
        let m00 = x.x
        let m11 = y.y
        let m22 = z.z
        let trace = m00 + m11 + m22
        if trace > 0 {
            let s = (trace + 1).squareRoot() * 2
            return Quaternion(w: 0.25 * s, x: (y.z - z.y) / s, y: (z.x - x.z) / s, z: (x.y - y.x) / s)
        } else if m00 > m11, m00 > m22 {
            let s = (1 + m00 - m11 - m22).squareRoot() * 2
            return Quaternion(w: (y.z - z.y) / s, x: 0.25 * s, y: (y.x + x.y) / s, z: (z.x + x.z) / s)
        } else if m11 > m22 {
            let s = (1 + m11 - m00 - m22).squareRoot() * 2
            return Quaternion(w: (z.x - x.z) / s, x: (y.x + x.y) / s, y: 0.25 * s, z: (z.y + y.z) / s)
        } else {
            let s = (1 + m22 - m00 - m11).squareRoot() * 2
            return Quaternion(w: (x.y - y.x) / s, x: (z.x + x.z) / s, y: (z.y + y.z) / s, z: 0.25 * s)
        }
    }

    /// The reading (Core Motion's sign, g) at time `t` s.
    /// - Parameters:
    ///   - vertical: the pelvis's vertical acceleration, g (bounce and impacts).
    ///   - stride: strides since the walk began (0 at this leg's first strike) with its rate, strides/s; nil
    ///     while standing.
    ///   - envelope: 0 standing … 1 in full stride (scales the swing and the pelvis's sway and surge).
    func reading(at t: Double, vertical: Double, stride: (phase: Double, rate: Double)?, envelope: Double) -> Vector3 {
        let g = standardGravity
        var hipVertical = 0.0
        var surgeAcceleration = 0.0
        var swayAcceleration = 0.0
        var thigh = Jet(0)
        var rock = Jet(0)
        if let stride {
            let s = Jet(stride.phase, stride.rate, 0)
            let w = s * (2 * Double.pi)
            surgeAcceleration = -envelope * surge * g * (w * 2).sine.v
            swayAcceleration = envelope * sway * g * w.sine.v
            hipVertical = -envelope * swingDip * cos(2 * Double.pi * (stride.phase - swingDipPhase))
            thigh = (w.cosine * flexionAmplitude + (w * 2 + flexionSecondPhase).cosine * flexionSecond) * envelope
            rock = (w + (-2 * Double.pi * wobbleLag)).sine * (wobble * envelope)
        }
        let pelvis = KinematicFrame(
            altitude: Placement.hipHeight,
            acceleration: Vector3(surgeAcceleration, swayAcceleration, (vertical + hipVertical) * g)
        )
        let seat = drift * sin(2 * Double.pi * t / driftPeriod)
        let twist = 0.5 * drift * sin(2 * Double.pi * t / (1.7 * driftPeriod) + 1)
        // Flexion swings the knee forward: a negative turn about the left axis.
        let frame =
            pelvis
            .rotated(about: Placement.left, by: -((thigh + flexionMean) * follow))
            .translated(by: offset)
            .rotated(about: Placement.left, by: -rock)
            .rotated(about: Placement.left, by: Jet(seat))
            .rotated(about: Placement.up, by: Jet(twist))
            .rotated(by: mount)
        let specificForce = frame.acceleration + Vector3(0, 0, g)
        var reading = -frame.attitude.inverseRotate(specificForce) / g
        if let stride {
            for k in knocks {
                var d = stride.phase - stride.phase.rounded(.down) - k.phase
                d -= d.rounded()
                reading += envelope * GaitStressSignal.pulse(d / stride.rate, width: 0.06) * k.reading
            }
        }
        return reading
    }
}
