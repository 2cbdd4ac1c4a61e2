import AgentControl
import AgentPipeline
import Logging
import ServiceLifecycle
import UnixSignals

/// The built agent: its services in `ServiceGroup` order.
///
/// The order states the shutdown, which runs backwards, each service finishing before the next is told:
/// the watchdog says STOPPING=1; acquisition stops; the estimators' state is saved and the history polled a
/// last time; the metrics stop; the publisher flushes the batches and drains the outbox while the broker's
/// acknowledgements keep arriving on their own path; control stops; the connection supervisor publishes the
/// goodbye and disconnects; the lifecycle service logs what was left and marks the health file stopped.
package struct AgentServices: Sendable {
    package let services: [any Service]
    /// The parts the services share, for whoever runs the agent without threads (the simulation turns the
    /// publisher's loops, `OutboxPublisher.Drive.turns`) and checks what it claims against what is in force.
    package let parts: Parts

    package struct Parts: Sendable {
        package let publisher: OutboxPublisher
        package let controller: AgentController
        package let reconciler: ConfigurationReconciler
        package let outbox: Outbox
        package let hub: SensorHub
        /// The Sparkplug edge node's service, when `sparkplug.enabled` (its drainer is turned like the publisher).
        package let sparkplug: SparkplugService?
    }

    init(services: [any Service], parts: Parts) {
        self.services = services
        self.parts = parts
    }

    /// One group running every service; `gracefulShutdownSignals` start the ordered shutdown.
    package func serviceGroup(gracefulShutdownSignals: [UnixSignal] = [], logger: Logger) -> ServiceGroup {
        ServiceGroup(services: services, gracefulShutdownSignals: gracefulShutdownSignals, logger: logger)
    }
}
