import MotionModel

/// A bicycle ride or a car drive: legs between stops, each leg accelerating from rest to a cruising speed
/// and braking back to rest (smootherstep speed ramps), turning at the start of a leg (as at a junction,
/// while still slow), with ride vibration on top.
///
/// - Cycling: 5.5 m/s (20 km/h), 6 s ramps (peak ≈ 1.7 m/s²); the phone is in a trouser pocket and the
///   thigh swings with the pedals (≈ 1.3 Hz, hip flexion 54° ± 20° while moving); road vibration
///   10–25 Hz through the saddle.
/// - Driving: 13.9 m/s (50 km/h), 10 s ramps (peak ≈ 2.6 m/s², ordinary town driving); the phone lies in
///   the console tray; suspension heave (1.3 and 2.1 Hz), road vibration 10–30 Hz, and the engine's
///   second-order vibration (25 Hz at 750 rpm idle for a four-cylinder engine) also while stopped.
///
/// Vibration is a sum of sinusoids with seeded phases, not a random process: it has the right
/// frequencies and amplitudes, and stays exactly differentiable.
struct VehicleMotion: Sendable {
    enum Kind: Sendable, Equatable {
        case bicycle
        case car
    }

    struct Leg: Sendable {
        var start: Double
        var duration: Double
        var turn: Double
        /// Path distance before this leg, m.
        var distanceBefore: Double
        /// Heading before this leg, rad.
        var headingBefore: Double
    }

    let kind: Kind
    let cruiseSpeed: Double
    let ramp: Double
    let pedalHz: Double
    let duration: Double
    private let legs: [Leg]
    /// One sinusoidal vibration component.
    struct Tone: Sendable {
        /// Hz.
        var frequency: Double
        /// m/s² of acceleration for translations, rad for rotations.
        var amplitude: Double
        /// rad, from the seed.
        var phase: Double

        /// The displacement (or angle) whose second derivative has amplitude `amplitude` (translations).
        func displacement(at t: Jet) -> Jet {
            let w = 2 * Double.pi * frequency
            return (t * w + phase).sine * (amplitude / (w * w))
        }

        /// The angle with amplitude `amplitude` (rotations).
        func angle(at t: Jet) -> Jet {
            (t * (2 * .pi * frequency) + phase).sine * amplitude
        }
    }

    /// Road vibration, vertical and lateral.
    private let vertical: [Tone]
    private let lateral: [Tone]
    /// Engine vibration that continues while stopped (car only).
    private let engine: Tone
    /// Small angular vibration of the car body, pitch and roll.
    private let pitch: [Tone]
    private let roll: [Tone]

    /// A junction turn: 90° over 8 s from the moment the vehicle pulls away (peak ≈ 21 °/s, at most
    /// ≈ 2.6 m/s² sideways in the car).
    static let turnDelay = 0.0
    static let turnDuration = 8.0

    init(kind: Kind, pedalHz: Double, random: inout RandomSource) {
        self.kind = kind
        self.pedalHz = pedalHz
        // (stop before, moving time, turn) per leg; the cycle ends with a stop.
        let plan: [(Double, Double, Double)]
        let finalStop: Double
        switch kind {
        case .bicycle:
            cruiseSpeed = 5.5
            ramp = 6
            plan = [(4, 45, .pi / 2), (6, 60, -.pi / 2), (5, 35, .pi / 2)]
            finalStop = 4
            vertical = [11.3, 15.7, 19.1, 23.9]
                .map { Tone(frequency: $0, amplitude: 0.35, phase: random.uniform(0, 2 * .pi)) }
            lateral = [12.9, 17.3].map { Tone(frequency: $0, amplitude: 0.15, phase: random.uniform(0, 2 * .pi)) }
            engine = Tone(frequency: 25, amplitude: 0, phase: 0)
            pitch = []
            roll = []
        case .car:
            cruiseSpeed = 13.9
            ramp = 10
            plan = [(8, 60, .pi / 2), (10, 45, -.pi / 2), (5, 90, -.pi / 2), (12, 50, .pi / 2)]
            finalStop = 6
            // Suspension heave (1.3, 2.1 Hz) and road texture (10–30 Hz).
            vertical = [(1.3, 0.33), (2.1, 0.25), (11.7, 0.25), (14.3, 0.25), (17.9, 0.2), (22.6, 0.2), (27.1, 0.15)]
                .map { Tone(frequency: $0.0, amplitude: $0.1, phase: random.uniform(0, 2 * .pi)) }
            lateral = [(0.9, 0.1), (13.1, 0.12), (19.7, 0.1)]
                .map { Tone(frequency: $0.0, amplitude: $0.1, phase: random.uniform(0, 2 * .pi)) }
            engine = Tone(frequency: 25, amplitude: 0.08, phase: random.uniform(0, 2 * .pi))
            pitch = [(1.3, 3e-3), (14.3, 1e-4)]
                .map { Tone(frequency: $0.0, amplitude: $0.1, phase: random.uniform(0, 2 * .pi)) }
            roll = [(1.7, 2e-3), (22.6, 8e-5)]
                .map { Tone(frequency: $0.0, amplitude: $0.1, phase: random.uniform(0, 2 * .pi)) }
        }
        var legs: [Leg] = []
        var t = 0.0
        var distance = 0.0
        var heading = 0.0
        for (stop, moving, turn) in plan {
            t += stop
            legs.append(Leg(start: t, duration: moving, turn: turn, distanceBefore: distance, headingBefore: heading))
            t += moving
            distance += cruiseSpeed * (moving - ramp)
            heading += turn
        }
        self.legs = legs
        duration = t + finalStop
    }

    func evaluate(at tau: Double) -> LocalMotion {
        let t = Jet.time(tau)
        var distance = Jet.zero
        var heading = Jet.zero
        var moving = Jet.zero
        var lastHeading = 0.0
        var lastDistance = 0.0
        var inLeg = false
        for i in legs.indices {
            let leg = legs[i]
            if tau < leg.start { break }
            lastHeading = leg.headingBefore + leg.turn
            lastDistance = leg.distanceBefore + cruiseSpeed * (leg.duration - ramp)
            if tau <= leg.start + leg.duration {
                let local = t + (-leg.start)
                moving = Profile.window(local, length: leg.duration, ramp: ramp)
                distance =
                    Profile.windowIntegral(local, length: leg.duration, ramp: ramp) * cruiseSpeed
                    + leg.distanceBefore
                let turning = (local + (-VehicleMotion.turnDelay)) * (1 / VehicleMotion.turnDuration)
                heading = Profile.smootherstep(turning) * leg.turn + leg.headingBefore
                inLeg = true
            }
        }
        if !inLeg {
            distance = Jet(lastDistance)
            heading = Jet(lastHeading)
        }

        var up = Jet.zero
        for i in vertical.indices { up += vertical[i].displacement(at: t) }
        up = up * moving
        var side = Jet.zero
        for i in lateral.indices { side += lateral[i].displacement(at: t) }
        side = side * moving
        if engine.amplitude > 0 {
            // The engine starts and stops with the segment (1 s), so the segment still begins and ends at rest.
            let running = Profile.window(t, length: duration, ramp: 1)
            up += engine.displacement(at: t) * running
        }

        var frame = KinematicFrame.path(distance: distance, heading: heading, altitude: .zero)
            .rotated(about: Placement.up, by: heading)
        let activity: SimulationActivity
        switch kind {
        case .bicycle:
            activity = .cycling
            let pedal = (t * (2 * .pi * pedalHz)).sine * 0.35 + 0.95
            frame = frame.translated(by: JetVector(.zero, side, up + Placement.hipHeight))
                .translated(by: Placement.pocketHipOffset)
                .rotated(about: Placement.left, by: -(pedal * moving))
                .translated(by: Vector3(0, 0, -Placement.thighLength))
                .rotated(by: Placement.pocketMount)
        case .car:
            activity = .automotive
            var pitchAngle = Jet.zero
            for i in pitch.indices { pitchAngle += pitch[i].angle(at: t) }
            var rollAngle = Jet.zero
            for i in roll.indices { rollAngle += roll[i].angle(at: t) }
            frame = frame.translated(by: JetVector(.zero, side, up))
                .rotated(about: Placement.left, by: pitchAngle * moving)
                .rotated(about: Placement.forward, by: rollAngle * moving)
                .translated(by: Placement.trayOffset)
                .rotated(by: Placement.faceUpTopForward)
        }
        return LocalMotion(
            frame: frame,
            heading: heading.v,
            ground: 0,
            steps: 0,
            distance: 0,
            floorsAscended: 0,
            floorsDescended: 0,
            cadence: 0,
            speed: distance.d,
            activity: activity
        )
    }
}
