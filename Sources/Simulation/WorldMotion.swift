import MotionModel

/// The state of the simulated world at one instant.
struct WorldMotion: Sendable {
    var frame: KinematicFrame
    var steps: Int
    var distance: Double
    var floorsAscended: Int
    var floorsDescended: Int
    var cadence: Double
    var speed: Double
    var activity: SimulationActivity
    var scenario: SimulationScenario
    var isTransition: Bool
}
