/// Scenario parameters beyond the scenario's name. Defaults are typical adult figures.
package struct SimulationOptions: Sendable, Equatable {
    /// Walking cadence, steps/s (1.8 ≈ 108 steps/min, an ordinary pace; 1.5–2.1 is the usual range).
    package var walkingCadenceHz: Double = 1.8
    /// Running cadence, steps/s (2.7 ≈ 162 steps/min, recreational running).
    package var runningCadenceHz: Double = 2.7
    /// Pedalling rate, revolutions/s (1.3 ≈ 78 rpm).
    package var pedallingHz: Double = 1.3
    /// Floors per climb in `stairs-up` and `stairs-down` before the lift takes the person back.
    package var floorsPerClimb: Int = 4
    /// Heading of the person (or the table's long edge) at the start, rad counter-clockwise from north;
    /// `nil` draws it from the seed.
    package var initialHeading: Double? = nil

    package init() {}
}
