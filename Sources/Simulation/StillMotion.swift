import MotionModel

/// The phone at rest in a placement: on a table or a car's tray it is perfectly still; in a hand it shows
/// physiological tremor (≈ 9 Hz, ≈ 0.02°) and slow postural sway (≈ 0.25 Hz, ≈ 0.3°); in the pocket of a
/// standing person, the postural sway alone.
///
/// Also the lift ride (`liftHeight ≠ 0`): the person stands holding the phone while the ground moves
/// vertically at up to 1.5 m/s with ≈ 1.1 m/s² starts and stops (typical for office-building lifts).
struct StillMotion: Sendable {
    var placement: Placement
    var activity: SimulationActivity
    var duration: Double
    /// Metres the ground rises during the segment (a lift), 0 otherwise.
    var liftHeight: Double = 0
    /// Tremor phases, rad, from the seed.
    var phases: (Double, Double, Double, Double) = (0, 0, 0, 0)

    static let liftSpeed = 1.5
    static let liftRamp = 2.5

    static func lift(height: Double, phases: (Double, Double, Double, Double)) -> StillMotion {
        StillMotion(
            placement: .hand,
            activity: .stationary,
            duration: abs(height) / liftSpeed + liftRamp,
            liftHeight: height,
            phases: phases
        )
    }

    func evaluate(at tau: Double) -> LocalMotion {
        let t = Jet.time(tau)
        // Motion fades in and out over 1 s so the segment starts and ends exactly at rest.
        let envelope = Profile.window(t, length: duration, ramp: duration.isFinite ? min(1, duration / 4) : 0)
        var ground = Jet.zero
        if liftHeight != 0 {
            let ramp = StillMotion.liftRamp
            ground = Profile.windowIntegral(t, length: duration, ramp: ramp) * (liftHeight / (duration - ramp))
        }
        var frame = KinematicFrame.path(distance: .zero, heading: .zero, altitude: ground)
        switch placement {
        case .table:
            frame = frame.translated(by: Placement.tableOffset).rotated(by: Placement.faceUpTopForward)
        case .carTray:
            frame = frame.translated(by: Placement.trayOffset).rotated(by: Placement.faceUpTopForward)
        case .hand:
            let tremor = (t * (2 * .pi * 9.3) + phases.0).sine * 3e-4
            let tremorRoll = (t * (2 * .pi * 8.1) + phases.1).sine * 2.5e-4
            let sway = (t * (2 * .pi * 0.25) + phases.2).sine * 5e-3
            let swayRoll = (t * (2 * .pi * 0.17) + phases.3).sine * 4e-3
            frame = frame.translated(by: Vector3(0, 0, Placement.hipHeight))
                .translated(by: Placement.handOffset)
                .rotated(about: Placement.left, by: (tremor + sway) * envelope)
                .rotated(about: Placement.forward, by: (tremorRoll + swayRoll) * envelope)
                .rotated(by: Placement.handMount)
        case .pocket:
            let sway = (t * (2 * .pi * 0.25) + phases.2).sine * 3e-3
            frame = frame.translated(by: Vector3(0, 0, Placement.hipHeight))
                .translated(by: Placement.pocketHipOffset)
                .rotated(about: Placement.left, by: sway * envelope)
                .translated(by: Vector3(0, 0, -Placement.thighLength))
                .rotated(by: Placement.pocketMount)
        }
        return LocalMotion(
            frame: frame,
            heading: 0,
            ground: ground.v,
            steps: 0,
            distance: 0,
            floorsAscended: 0,
            floorsDescended: 0,
            cadence: 0,
            speed: 0,
            activity: activity
        )
    }
}
