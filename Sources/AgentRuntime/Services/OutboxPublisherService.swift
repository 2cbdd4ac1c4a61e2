import ServiceLifecycle

/// The publisher's threads, from the start to the drain. It stops after acquisition, the history and the
/// estimators (later in the group) and before control and the connection (earlier): the last batches are
/// flushed into the outbox, then the outbox drains while acknowledgements keep arriving on their own path.
final class OutboxPublisherService: Service {
    private let context: AgentContext

    init(context: AgentContext) {
        self.context = context
    }

    func run() async throws {
        context.publisher.start()
        if context.publisher.durableCounters != nil {
            await cancelWhenGracefulShutdown { [context] in await context.watchStorage() }
        }
        // Cancelled instead (the group failed): stop the threads all the same.
        try? await gracefulShutdown()
        if context.startup.isOpen { context.controller.flushBatches() }
        context.logger.info("shutting down: draining the outbox")
        let drain = context.configuration.mqtt.keepalive > 0 ? context.options.drainTimeout : 0
        await context.publisher.stop(drainTimeout: drain)
    }
}
