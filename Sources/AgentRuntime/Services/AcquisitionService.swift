import AgentPipeline
import AgentPorts
import Logging
import ServiceLifecycle

/// Runs the sensor source into the hub; if it fails, says why and tries again with back-off. Near the end
/// of the group, so it is among the first to stop: no sample arrives once the outbox starts draining.
final class AcquisitionService: Service {
    private let source: SensorSource
    private let hub: SensorHub
    private let startup: AgentStartup
    private let backoffSeed: UInt64
    private let clock: any AgentClock
    private let logger: Logger

    init(
        source: SensorSource,
        hub: SensorHub,
        startup: AgentStartup,
        backoffSeed: UInt64,
        clock: any AgentClock,
        logger: Logger
    ) {
        self.backoffSeed = backoffSeed
        self.source = source
        self.hub = hub
        self.startup = startup
        self.clock = clock
        self.logger = logger
    }

    func run() async throws {
        guard await startup.bootCount() != nil else { return }
        await cancelWhenGracefulShutdown { [self] in await self.acquire() }
    }

    private func acquire() async {
        var backoff = Backoff(base: 1, cap: 30, seed: backoffSeed)
        while !Task.isCancelled {
            do {
                try await source.run(into: hub)
                if Task.isCancelled { return }
                logger.notice("the sensor source ended; the agent keeps running and publishing status")
                try? await clock.sleep(seconds: 365 * 86400)
            } catch {
                if Task.isCancelled { return }
                let delay = backoff.next()
                logger.error("sensor source failed: \(error) — retrying in \(String(format: "%.1f", delay)) s")
                try? await clock.sleep(seconds: delay)
            }
        }
    }
}
