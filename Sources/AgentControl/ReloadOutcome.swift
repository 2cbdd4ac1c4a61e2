import AgentPipeline
import MotionWire

/// The result of one reload, for the log, the status and the `reload-config` reply.
package enum ReloadOutcome: Sendable, Equatable {
    case applied(ReloadReport)
    /// Nothing changed; the failure says why and what to do.
    case refused(ControlFailure)

    /// One line for the agent's log.
    package var summary: String {
        switch self {
        case .applied(let report): "configuration reloaded: \(report.message)"
        case .refused(let failure): "configuration not reloaded: \(failure.message)"
        }
    }
}
