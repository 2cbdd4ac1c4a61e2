import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Walking, running and stair climbing: the body's centre of mass follows the periodic pattern of a gait
/// (vertical bounce, forward surge, sideways sway) along a gently meandering path, and the phone rides in
/// the hand or in a trouser pocket on the swinging thigh.
///
/// The vertical acceleration over one step is a half-sine stance pulse (the ground reaction force, zero
/// during the flight phase of running) minus its mean so that the body does not drift, kept to its first
/// six harmonics; its trough is set to a typical minimum (≈ −0.25 g walking, ≈ −0.8 g running, i.e.
/// near free fall), which puts the peak at ≈ 0.55 g walking and ≈ 2.8 g running — the magnitudes commonly
/// reported for body-worn accelerometers (≈ 0.3–0.6 g walking, 2–3 g running). Over 5 s windows the
/// walking |a| (hand-held, seed 3: median std 3.0 m/s², min 7.1 m/s², max 15.2 m/s²) is close to the
/// medians of the real walking windows in the TMD activity windows (Tests/Fixtures/data/activity) (3.1, 6.0, 15.2 m/s²).
///
/// A foot strikes at every integer gait phase φ (one step per unit); `steps` counts the strikes.
struct GaitMotion: Sendable {
    enum Kind: Sendable, Equatable {
        case level
        /// `floors` floors of 3 m, up (`rise > 0`) or down.
        case stairs(floors: Int, rise: Double)
    }

    var kind: Kind
    var activity: SimulationActivity
    var placement: Placement
    /// Steps per second at full speed.
    var cadence: Double
    /// Metres per step along the path.
    var stepLength: Double
    /// Segment length, s (`.infinity` for a scenario that never stops).
    var duration: Double
    /// Start-up and slow-down time, s (0 for an endless segment, which is in stride from the start).
    var ramp: Double
    /// Gait phase at the start (0.5 starts an endless walk mid-step, so the first strike comes after half a
    /// step, not at t = 0).
    var phaseOffset: Double
    /// Vertical acceleration harmonics of one step (cos, sin), m/s², k = 1…6.
    var verticalCos: [Double]
    var verticalSin: [Double]
    /// Forward surge (m/s², at the step frequency) and sideways sway (m/s², at half of it).
    var surge: Double
    var sway: Double
    /// Thigh flexion mean and amplitude, rad (pocket placement).
    var thighMean: Double
    var thighAmplitude: Double
    /// Hand pitch (at the step frequency) and roll (at half of it) amplitudes, rad.
    var handPitch: Double
    var handRoll: Double
    /// Whether the path meanders.
    var wanders: Bool

    /// Steps per floor on stairs: two flights of 9 steps (18 × 0.167 m = 3 m) and 2 on the landing,
    /// where the walker turns 180°.
    static let flightSteps = 9.0
    static let landingSteps = 2.0
    static let floorCycle = 2 * flightSteps + landingSteps
    /// Metres per floor.
    static let floorHeight = 3.0

    static func walking(cadence: Double, duration: Double) -> GaitMotion {
        var g = GaitMotion(
            kind: .level,
            activity: .walking,
            placement: .hand,
            cadence: cadence,
            stepLength: 0.7,
            duration: duration,
            ramp: 0,
            phaseOffset: 0,
            verticalCos: [],
            verticalSin: [],
            surge: 1.2,
            sway: 0.6,
            thighMean: 0.13,
            thighAmplitude: 0.30,
            handPitch: 0.035,
            handRoll: 0.04,
            wanders: true
        )
        g.setStancePulse(duty: 0.5, trough: 2.5)
        g.setDuration(duration)
        return g
    }

    static func running(cadence: Double, duration: Double) -> GaitMotion {
        var g = GaitMotion(
            kind: .level,
            activity: .running,
            placement: .pocket,
            cadence: cadence,
            stepLength: 1.1,
            duration: duration,
            ramp: 0,
            phaseOffset: 0,
            verticalCos: [],
            verticalSin: [],
            surge: 3.0,
            sway: 1.2,
            thighMean: 0.35,
            thighAmplitude: 0.55,
            handPitch: 0.06,
            handRoll: 0.08,
            wanders: true
        )
        g.setStancePulse(duty: 0.35, trough: 0.8 * standardGravity)
        g.setDuration(duration)
        return g
    }

    /// `floors` floors on foot, up or down, at a stair cadence of 1.6 steps/s (≈ 0.24 m/s vertical).
    static func stairs(floors: Int, up: Bool) -> GaitMotion {
        let cadence = 1.6
        var g = GaitMotion(
            kind: .stairs(floors: floors, rise: up ? floorHeight : -floorHeight),
            activity: .walking,
            placement: .hand,
            cadence: cadence,
            stepLength: 0.3,
            duration: 0,
            ramp: 0,
            phaseOffset: 0,
            verticalCos: [],
            verticalSin: [],
            surge: 0.8,
            sway: 0.5,
            thighMean: 0.3,
            thighAmplitude: 0.35,
            handPitch: 0.03,
            handRoll: 0.035,
            wanders: false
        )
        g.setStancePulse(duty: 0.5, trough: 2.0)
        // The ramp is one step; the phase reaches exactly floors × floorCycle at the end.
        g.ramp = 1 / cadence
        g.duration = Double(floors) * floorCycle / cadence + g.ramp
        return g
    }

    private mutating func setDuration(_ d: Double) {
        duration = d
        if d.isFinite {
            ramp = 1 / cadence
            phaseOffset = 0
        } else {
            ramp = 0
            phaseOffset = 0.5
        }
    }

    /// Fourier coefficients of a half-sine pulse of width `duty` (fraction of a step) starting at the
    /// strike, with its mean removed, scaled so its minimum is −`trough` m/s².
    private mutating func setStancePulse(duty: Double, trough: Double) {
        let peak = trough * .pi / (2 * duty)
        let n = 1024
        var c = [Double](repeating: 0, count: 6)
        var s = [Double](repeating: 0, count: 6)
        for i in 0..<n {
            let u = (Double(i) + 0.5) / Double(n)
            let a = u < duty ? peak * sin(.pi * u / duty) : 0
            for k in 1...6 {
                let w = 2 * Double.pi * Double(k) * u
                c[k - 1] += 2 * a * cos(w) / Double(n)
                s[k - 1] += 2 * a * sin(w) / Double(n)
            }
        }
        verticalCos = c
        verticalSin = s
    }

    var totalSteps: Double {
        switch kind {
        case .level: duration.isFinite ? cadence * (duration - ramp) : .infinity
        case .stairs(let floors, _): Double(floors) * GaitMotion.floorCycle
        }
    }

    func evaluate(at tau: Double) -> LocalMotion {
        let t = Jet.time(tau)
        let envelope = Profile.window(t, length: duration, ramp: ramp)
        let phase = Profile.windowIntegral(t, length: duration, ramp: ramp) * cadence + phaseOffset
        let stepCount = max(0, Int((phase.v + 1e-9).rounded(.down)))

        var heading = Jet.zero
        var ground = Jet.zero
        var floorsUp = 0
        var floorsDown = 0
        switch kind {
        case .level:
            if wanders {
                heading = (phase * (2 * .pi / 173)).sine * 0.35 + (phase * (2 * .pi / 61)).sine * 0.2
            }
        case .stairs(let floors, let rise):
            let cycle = GaitMotion.floorCycle
            let k = min(Double(floors - 1), max(0, (phase.v / cycle + 1e-9).rounded(.down)))
            let u = phase + (-k * cycle)
            let flight = GaitMotion.flightSteps
            let half = rise / 2
            let flightA = Profile.windowIntegral(u, length: flight, ramp: 1) * (half / (flight - 1))
            let flightB =
                Profile.windowIntegral(u + (-(flight + GaitMotion.landingSteps)), length: flight, ramp: 1)
                * (half / (flight - 1))
            ground = flightA + flightB + rise * k
            // The U-turn starts on the last step of the flight and ends on the first step of the next
            // (4 steps, 2.5 s, peak ≈ 135 °/s).
            let turnStart = flight - 1
            let turnSteps = GaitMotion.landingSteps + 2
            heading = Profile.smootherstep((u + (-turnStart)) * (1 / turnSteps)) * .pi + .pi * k
            let done = min(floors, Int((phase.v / cycle + 1e-9).rounded(.down)))
            if rise > 0 { floorsUp = done } else { floorsDown = done }
        }

        let distance = phase * stepLength + (-phaseOffset * stepLength)
        var frame = KinematicFrame.path(distance: distance, heading: heading, altitude: ground + Placement.hipHeight)
        frame = frame.rotated(about: Placement.up, by: heading)

        // Centre-of-mass oscillation about the path, in the walker's axes.
        var vertical = Jet.zero
        let stepRate = 2 * Double.pi * cadence
        for k in 0..<verticalCos.count {
            let w = Double(k + 1)
            let angle = phase * (2 * .pi * w)
            let scale = -1 / (stepRate * w * stepRate * w)
            vertical += angle.cosine * (verticalCos[k] * scale) + angle.sine * (verticalSin[k] * scale)
        }
        // Forward speed dips after each strike (a = −surge·sin 2πφ); the body sways toward the stance foot.
        let surgeOffset = (phase * (2 * .pi)).sine * (surge / (stepRate * stepRate))
        let halfRate = stepRate / 2
        let swayOffset = (phase * .pi).sine * (-sway / (halfRate * halfRate))
        frame = frame.translated(by: JetVector(surgeOffset * envelope, swayOffset * envelope, vertical * envelope))

        switch placement {
        case .pocket:
            // Hip flexion peaks as this (left) leg strikes, at even phases; flexion swings the knee forward,
            // which is a negative turn about the left axis.
            let thigh = (phase * .pi).cosine * thighAmplitude + thighMean
            frame = frame.translated(by: Placement.pocketHipOffset)
                .rotated(about: Placement.left, by: -(thigh * envelope))
                .translated(by: Vector3(0, 0, -Placement.thighLength))
                .rotated(by: Placement.pocketMount)
        default:
            let pitch = (phase * (2 * .pi) + (-0.6)).sine * handPitch
            let roll = (phase * .pi).sine * handRoll
            frame = frame.translated(by: Placement.handOffset)
                .rotated(about: Placement.left, by: pitch * envelope)
                .rotated(about: Placement.forward, by: roll * envelope)
                .rotated(by: Placement.handMount)
        }

        return LocalMotion(
            frame: frame,
            heading: heading.v,
            ground: ground.v,
            steps: stepCount,
            distance: distance.v,
            floorsAscended: floorsUp,
            floorsDescended: floorsDown,
            cadence: phase.d,
            speed: distance.d,
            activity: activity
        )
    }
}
