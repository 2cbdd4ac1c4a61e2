import AgentPorts

/// Lets the hub, built before the controller, forward faults to it.
final class FaultForwarder: @unchecked Sendable {
    // Set once in AgentBuilder.build before any sample flows; read-only afterwards.
    var target: (@Sendable (SourceFault) -> Void)?
    func forward(_ fault: SourceFault) { target?(fault) }
}
