import ServiceLifecycle

/// The `{root}/metrics` report and the Prometheus file, every `metrics.interval_s` as the desired
/// layers leave it (none while it is 0).
final class MetricsService: Service {
    private let context: AgentContext

    init(context: AgentContext) {
        self.context = context
    }

    func run() async throws {
        guard let boot = await context.startup.bootCount() else { return }
        await cancelWhenGracefulShutdown { [context] in
            await context.operations.reportMetrics(
                bootCount: boot,
                interval: { context.controller.metricsIntervalSeconds }
            ) { context.healthCounters() }
        }
    }
}
