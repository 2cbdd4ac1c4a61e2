import AgentPipeline
import AgentPorts
import Logging
import ServiceLifecycle

/// Feeds systemd's watchdog only while acquisition is alive: samples keep arriving whenever some sensor is
/// switched on, so a wedged source thread stops the keep-alives and systemd restarts the agent. Last in the
/// group, so first to stop: STOPPING=1 goes out as soon as the shutdown begins.
final class WatchdogService: Service {
    private let host: HostSystem
    private let hub: SensorHub
    private let controller: AgentController
    private let startup: AgentStartup
    private let clock: any AgentClock
    private let logger: Logger

    init(
        host: HostSystem,
        hub: SensorHub,
        controller: AgentController,
        startup: AgentStartup,
        clock: any AgentClock,
        logger: Logger
    ) {
        self.host = host
        self.hub = hub
        self.controller = controller
        self.startup = startup
        self.clock = clock
        self.logger = logger
    }

    func run() async throws {
        guard await startup.bootCount() != nil else { return }
        if let interval = host.watchdogIntervalSeconds {
            await cancelWhenGracefulShutdown { [self] in await self.keepFed(every: interval) }
        }
        try? await gracefulShutdown()
        host.notifyServiceManager("STOPPING=1")
    }

    private func keepFed(every interval: Double) async {
        var lastSamples = hub.counters.samples
        while (try? await clock.sleep(seconds: interval)) != nil {
            let samples = hub.counters.samples
            if samples != lastSamples || !controller.anySensorOn {
                host.notifyServiceManager("WATCHDOG=1")
            } else {
                logger.error(
                    "no samples for \(String(format: "%.0f", interval)) s while sensors are on: not feeding the systemd watchdog"
                )
            }
            lastSamples = samples
        }
    }
}
