/// The truth label of what the simulated person is doing, in Core Motion's `CMMotionActivity` classes.
package enum SimulationActivity: String, CaseIterable, Sendable {
    case stationary
    case walking
    case running
    case cycling
    /// In a vehicle, also while it waits at a stop with the engine running (as Core Motion reports).
    case automotive
}
