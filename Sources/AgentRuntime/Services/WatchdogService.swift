import ServiceLifecycle

/// Feeds systemd's watchdog only while acquisition is alive: samples keep arriving whenever some sensor is
/// switched on, so a wedged source thread stops the keep-alives and systemd restarts the agent. Last in the
/// group, so first to stop: STOPPING=1 goes out as soon as the shutdown begins.
final class WatchdogService: Service {
    private let context: AgentContext

    init(context: AgentContext) {
        self.context = context
    }

    func run() async throws {
        guard await context.startup.bootCount() != nil else { return }
        if let interval = context.host.watchdogIntervalSeconds {
            await cancelWhenGracefulShutdown { [self] in await self.keepFed(every: interval) }
        }
        try? await gracefulShutdown()
        context.host.notifyServiceManager("STOPPING=1")
    }

    private func keepFed(every interval: Double) async {
        var lastSamples = context.hub.counters.samples
        while (try? await Task.sleep(for: .seconds(interval))) != nil {
            let samples = context.hub.counters.samples
            if samples != lastSamples || !context.controller.anySensorOn {
                context.host.notifyServiceManager("WATCHDOG=1")
            } else {
                context.logger.error(
                    "no samples for \(String(format: "%.0f", interval)) s while sensors are on: not feeding the systemd watchdog"
                )
            }
            lastSamples = samples
        }
    }
}
