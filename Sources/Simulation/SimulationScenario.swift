/// What the simulated person does with the simulated device. Raw values are the configuration strings
/// (`source.simulated.scenario`).
package enum SimulationScenario: String, CaseIterable, Sendable {
    /// Face up on a table, heading fixed; only sensor errors move.
    case stationary
    /// Walking on level ground with the phone held in front of the chest (reading posture), gently
    /// meandering; cadence `SimulationOptions.walkingCadenceHz` (default 1.8 steps/s).
    case walking
    /// Running with the phone in a front trouser pocket (swinging with the thigh), ≈ 2.7 steps/s.
    case running
    /// Climbing stairs (18 steps and 3 m per floor, a landing with a U-turn half way), then riding the
    /// lift back down; repeats.
    case stairsUp = "stairs-up"
    /// Riding the lift up, then walking down the stairs; repeats.
    case stairsDown = "stairs-down"
    /// On a table, turned about each device axis in turn at known rates; no translation.
    case rotating
    /// Riding a bicycle with the phone in a trouser pocket: pedalling at ≈ 1.3 Hz, road vibration,
    /// turns and stops; no steps.
    case cycling
    /// Riding in a car with the phone in a tray: engine and road vibration (10–30 Hz), suspension
    /// heave, turns, acceleration, braking and stops at lights; no steps.
    case driving
    /// A looping day: table, walking, stairs up and down, running, cycling, driving, with the phone taken
    /// out of the pocket or put down between them.
    case mixedDay = "mixed-day"
}

extension SimulationScenario {
    /// The scenario named by a configuration string, or an error listing the valid names.
    package init(configValue: String) throws {
        guard let scenario = SimulationScenario(rawValue: configValue) else {
            let names = SimulationScenario.allCases.map(\.rawValue).joined(separator: ", ")
            throw SimulatedSourceError(
                .unknownScenario,
                "unknown simulation scenario '\(configValue)' — set source.simulated.scenario to one of: \(names)"
            )
        }
        self = scenario
    }
}
