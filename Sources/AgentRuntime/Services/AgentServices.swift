import AgentControl
import AgentPipeline
import AgentPorts
import Integrations
import Logging
import MotionWire
import ServiceLifecycle
import UnixSignals

/// The built agent: its services in `ServiceGroup` order, and read-only views for the CLI, tests and the
/// bench.
///
/// The order states the shutdown, which runs backwards, each service finishing before the next is told:
/// the watchdog says STOPPING=1; acquisition stops; the estimators' state is saved and the history polled a
/// last time; the metrics stop; the publisher flushes the batches and drains the outbox while the broker's
/// acknowledgements keep arriving on their own path; control stops; the connection supervisor publishes the
/// goodbye and disconnects; the lifecycle service logs what was left and marks the health file stopped.
public struct AgentServices: Sendable {
    let context: AgentContext
    public let services: [any Service]

    init(context: AgentContext) {
        self.context = context
        var services: [any Service] = [
            AgentLifecycleService(context: context),
            ConnectionSupervisorService(context: context),
            ControlService(context: context),
            OutboxPublisherService(context: context),
            MetricsService(context: context),
        ]
        if let history = context.history { services.append(HistoryService(context: context, history: history)) }
        services += [
            EstimatorStateService(context: context),
            AcquisitionService(context: context),
            WatchdogService(context: context),
        ]
        self.services = services
    }

    /// One group running every service; `gracefulShutdownSignals` start the ordered shutdown.
    public func serviceGroup(gracefulShutdownSignals: [UnixSignal] = [], logger: Logger) -> ServiceGroup {
        ServiceGroup(services: services, gracefulShutdownSignals: gracefulShutdownSignals, logger: logger)
    }

    public var controller: AgentController { context.controller }
    public var outboxCounters: Outbox.Counters { context.outbox.snapshot }
    public var durableCounters: DurableLog.Counters? { context.publisher.durableCounters }
    public var hubCounters: SensorHub.Counters { context.hub.counters }
    /// The outbox's, the hub's and the source's devices' counters, as the metrics report reads them.
    public func healthCounters() -> HealthCounters { context.healthCounters() }
}
