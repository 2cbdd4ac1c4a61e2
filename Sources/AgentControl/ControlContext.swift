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
    /// Sets runtime keys (`streams.gyroscope.rate_hz` → `50`) as this command's overrides, through the
    /// configuration's layers and the config schema's checks (already inside the door).
    let configure: ([String: String]) throws -> Void
}
