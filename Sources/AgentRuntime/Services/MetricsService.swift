import ServiceLifecycle

/// The `{root}/metrics` report and the Prometheus file, every `metrics.interval_s` as the desired
/// layers leave it (none while it is 0).
final class MetricsService: Service {
    private let operations: AgentOperations
    private let interval: @Sendable () -> Int
    private let counters: @Sendable () -> HealthCounters
    private let startup: AgentStartup

    init(
        operations: AgentOperations,
        interval: @escaping @Sendable () -> Int,
        counters: @escaping @Sendable () -> HealthCounters,
        startup: AgentStartup
    ) {
        self.operations = operations
        self.interval = interval
        self.counters = counters
        self.startup = startup
    }

    func run() async throws {
        guard let boot = await startup.bootCount() else { return }
        await cancelWhenGracefulShutdown { [operations, interval, counters] in
            await operations.reportMetrics(bootCount: boot, interval: interval, counters: counters)
        }
    }
}
