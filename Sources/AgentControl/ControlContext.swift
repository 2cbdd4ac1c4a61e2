import AgentConfig
import AgentPipeline
import MotionWire

/// What a command's handler may use: handed to `ControlCommandDescriptor.handle` by `ControlPlane` while it
/// holds the door, so handlers never take the door again.
struct ControlContext {
    let controller: AgentController
    /// The on-device step and activity history; nil when it could not be opened.
    let history: (any StepHistory)?
    let status: () -> AgentStatus
    /// The device clock, Unix seconds.
    let clock: () -> Double
    /// Re-reads config.yaml (already inside the door).
    let reload: () -> ReloadOutcome
    /// Sets runtime keys (checked by the config schema when the command was parsed) as this command's
    /// overrides, through the configuration's layers (already inside the door).
    let configure: (ConfigurationOverlay) throws -> Void
}
