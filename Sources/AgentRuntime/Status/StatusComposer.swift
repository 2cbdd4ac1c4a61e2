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
    private let durableOutbox: DurableOutbox
    private let connections: ConnectionCounters
    private let bootCount: SharedCounter

    init(
        controller: AgentController,
        outbox: Outbox,
        publisher: OutboxPublisher,
        reconciler: ConfigurationReconciler,
        durableOutbox: DurableOutbox,
        connections: ConnectionCounters,
        bootCount: SharedCounter
    ) {
        self.controller = controller
        self.outbox = outbox
        self.publisher = publisher
        self.reconciler = reconciler
        self.durableOutbox = durableOutbox
        self.connections = connections
        self.bootCount = bootCount
    }

    /// The status document as of now, and the full account of the configuration it summarises.
    func compose(
        _ state: AgentStatus.State,
        reason: String?
    ) -> (status: AgentStatus, configuration: ConfigurationStatus) {
        var status = controller.status(state: state, reason: reason, bootCount: bootCount.value)
        status.outbox = OutboxStatus(memory: outbox.snapshot, durable: publisher.durableCounters)
        // Above the maximum the stream is clamped; below it, a rate the driver does not offer is decimated.
        // A durable setting the log cannot serve is reported as not in force, never claimed.
        let notes = status.hardwareNotes.merging(controller.offeredRateNotes()) { clamped, _ in clamped }
            .merging(durableOutbox.notes(for: reconciler.effective)) { hardware, _ in hardware }
        let account = reconciler.status(notes: notes)
        var configuration = account
        configuration.device = status.device
        configuration.bootCount = status.bootCount
        configuration.time = status.time
        status.configuration = ConfigurationSummary(configuration)
        status.broker = connections.link
        return (status, configuration)
    }

    /// The status document as of now (the `status` command's reply).
    func status(_ state: AgentStatus.State, reason: String?) -> AgentStatus {
        compose(state, reason: reason).status
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
