import AgentPipeline
import Logging
import ServiceLifecycle

/// The publisher's threads, from the start to the drain. It stops after acquisition, the history and the
/// estimators (later in the group) and before control and the connection (earlier): the last batches are
/// flushed into the outbox, then the outbox drains while acknowledgements keep arriving on their own path.
final class OutboxPublisherService: Service {
    private let publisher: OutboxPublisher
    private let controller: AgentController
    private let health: HealthReporter
    private let status: StatusPublisher
    private let startup: AgentStartup
    /// Seconds the shutdown may spend handing queued messages to the broker.
    private let drainTimeout: Double
    private let logger: Logger

    init(
        publisher: OutboxPublisher,
        controller: AgentController,
        health: HealthReporter,
        status: StatusPublisher,
        startup: AgentStartup,
        drainTimeout: Double,
        logger: Logger
    ) {
        self.publisher = publisher
        self.controller = controller
        self.health = health
        self.status = status
        self.startup = startup
        self.drainTimeout = drainTimeout
        self.logger = logger
    }

    func run() async throws {
        publisher.start()
        if publisher.durableCounters != nil {
            await cancelWhenGracefulShutdown { [health, status] in
                await health.watchStorage { status.publishIfConnected() }
            }
        }
        // Cancelled instead (the group failed): stop the threads all the same.
        try? await gracefulShutdown()
        if startup.isOpen { controller.flushBatches() }
        logger.info("shutting down: draining the outbox")
        await publisher.stop(drainTimeout: drainTimeout)
    }
}
