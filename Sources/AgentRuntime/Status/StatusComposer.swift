import AgentControl
import AgentPipeline
import MotionWire

/// The one place the status document is composed — the controller's state (streams, devices, availability),
/// the outbox's counters, the configuration's account and the broker in use — for the retained birth and
/// goodbye, the will, and the control door's `status` and `list-streams` replies alike.
final class StatusComposer: Sendable {
    private let controller: AgentController
    private let outbox: Outbox
    private let publisher: OutboxPublisher
    private let reconciler: ConfigurationReconciler
    private let connections: ConnectionCounters
    private let bootCount: SharedCounter

    init(
        controller: AgentController,
        outbox: Outbox,
        publisher: OutboxPublisher,
        reconciler: ConfigurationReconciler,
        connections: ConnectionCounters,
        bootCount: SharedCounter
    ) {
        self.controller = controller
        self.outbox = outbox
        self.publisher = publisher
        self.reconciler = reconciler
        self.connections = connections
        self.bootCount = bootCount
    }

    /// The full status document as of now.
    func status(_ state: AgentStatus.State, reason: String?) -> AgentStatus {
        var status = controller.status(state: state, reason: reason, bootCount: bootCount.value)
        status.outbox = OutboxStatus(memory: outbox.snapshot, durable: publisher.durableCounters)
        // Above the maximum the stream is clamped; below it, a rate the driver does not offer is decimated.
        status.configuration = reconciler.status(
            notes: status.hardwareNotes.merging(controller.offeredRateNotes()) { clamped, _ in clamped }
        )
        status.broker = connections.link
        return status
    }

    /// The will: fixed at connect time, so small and free of values that go stale.
    func will(bootCount: UInt64) -> AgentStatus {
        var will = controller.status(state: .offline, reason: "connection lost", bootCount: bootCount)
        will.streams = nil
        will.devices = nil
        will.sensors = nil
        will.source = nil
        return will
    }
}
