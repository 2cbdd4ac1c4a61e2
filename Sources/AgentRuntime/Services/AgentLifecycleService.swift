import AgentControl
import AgentPipeline
import Integrations
import Logging
import MotionWire
import ServiceLifecycle

/// Boots the agent — the boot counter, the controller, the estimators' saved state, READY=1 — and opens
/// `AgentStartup` for the other services. First in the group, so last to stop: once the connection is
/// closed it says what was published and what was left, and marks the health file stopped.
final class AgentLifecycleService: Service {
    private let context: AgentContext

    init(context: AgentContext) {
        self.context = context
    }

    func run() async throws {
        do {
            try boot()
        } catch {
            context.startup.fail()
            throw error
        }
        try? await gracefulShutdown()
        let counters = context.outbox.snapshot
        context.logger.info(
            "stopped: \(counters.published) messages published, \(counters.depth) unsent, \(counters.droppedOverflow) dropped"
        )
        if let durable = context.publisher.durableCounters {
            context.logger.info(
                "durable outbox: \(durable.acknowledged) acknowledged, \(durable.depth) kept on disk for the next start, \(durable.dropped) dropped"
            )
        }
        context.writeHealth(.stopped, lastError: nil, failures: 0, retryIn: nil)
    }

    private func boot() throws {
        let boot = try context.host.incrementBootCount()
        context.bootCount.value = boot
        context.logger.info(
            "motion-agent \(AgentVersion.version) starting",
            metadata: [
                "agent.device": "\(context.configuration.device.id)", "agent.boot": "\(boot)",
                "agent.source": "\(context.source.summary)",
            ]
        )
        try context.controller.start()
        if let saved = context.estimatorStore.load() {
            _ = context.controller.withDeviceMotion { $0.restore(saved) }
            context.logger.info(
                "restored gyroscope bias and magnetometer calibration from \(context.estimatorStore.path)"
            )
        }
        context.host.notifyServiceManager("READY=1\nSTATUS=acquiring from \(context.source.summary)")
        context.startup.open(bootCount: boot)
    }
}
