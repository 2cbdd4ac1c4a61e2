import MotionModel

/// One part of a scenario's script, with where it starts in the loop and the running totals it continues
/// from (heading, ground level and counters at its start).
struct MotionSegment: Sendable {
    enum Motion: Sendable {
        case gait(GaitMotion)
        case still(StillMotion)
        case rotation(RotationMotion)
        case vehicle(VehicleMotion)
        case transition(TransitionMotion)
    }

    var motion: Motion
    /// The scenario this part belongs to (reported in the truth).
    var scenario: SimulationScenario
    var duration: Double
    var placement: Placement

    /// Filled in by `MotionScript`: start time within the loop and the totals before this segment.
    var start = 0.0
    var heading = 0.0
    var ground = 0.0
    var steps = 0
    var distance = 0.0
    var floorsAscended = 0
    var floorsDescended = 0

    init(_ motion: Motion, scenario: SimulationScenario) {
        self.motion = motion
        self.scenario = scenario
        switch motion {
        case .gait(let g):
            duration = g.duration
            placement = g.placement
        case .still(let s):
            duration = s.duration
            placement = s.placement
        case .rotation(let r):
            duration = r.duration
            placement = .table
        case .vehicle(let v):
            duration = v.duration
            placement = v.kind == .car ? .carTray : .pocket
        case .transition(let t):
            duration = t.duration
            placement = .hand
        }
    }

    func evaluate(at tau: Double) -> LocalMotion {
        switch motion {
        case .gait(let g): g.evaluate(at: tau)
        case .still(let s): s.evaluate(at: tau)
        case .rotation(let r): r.evaluate(at: tau)
        case .vehicle(let v): v.evaluate(at: tau)
        case .transition(let t): t.evaluate(at: tau)
        }
    }

    var isTransition: Bool {
        if case .transition = motion { return true }
        return false
    }
}
