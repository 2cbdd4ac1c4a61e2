/// What a command's handler may use: handed to `ControlCommandDescriptor.handle` by `ControlPlane` while it
/// holds the door, so handlers never take the door again.
struct ControlContext {
    let controller: AgentController
    let status: () -> AgentStatus
    /// The device clock, Unix seconds.
    let clock: () -> Double
    /// Re-reads config.yaml (already inside the door).
    let reload: () -> ReloadOutcome
}
