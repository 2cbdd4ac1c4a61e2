import AgentPipeline
import AgentPorts
import Logging
import MotionWire
import ServiceLifecycle

/// Boots the agent — the boot counter, the controller, the estimators' saved state, READY=1 — and opens
/// `AgentStartup` for the other services. First in the group, so last to stop: once the connection is
/// closed it says what was published and what was left, and marks the health file stopped.
final class AgentLifecycleService: Service {
    private let host: HostSystem
    private let startup: AgentStartup
    private let bootCount: SharedCounter
    private let controller: AgentController
    private let estimatorStore: EstimatorStateStore
    private let outbox: Outbox
    private let publisher: OutboxPublisher
    private let health: HealthReporter
    private let deviceID: String
    private let sourceSummary: String
    private let logger: Logger

    init(
        host: HostSystem,
        startup: AgentStartup,
        bootCount: SharedCounter,
        controller: AgentController,
        estimatorStore: EstimatorStateStore,
        outbox: Outbox,
        publisher: OutboxPublisher,
        health: HealthReporter,
        deviceID: String,
        sourceSummary: String,
        logger: Logger
    ) {
        self.host = host
        self.startup = startup
        self.bootCount = bootCount
        self.controller = controller
        self.estimatorStore = estimatorStore
        self.outbox = outbox
        self.publisher = publisher
        self.health = health
        self.deviceID = deviceID
        self.sourceSummary = sourceSummary
        self.logger = logger
    }

    func run() async throws {
        do {
            try boot()
        } catch {
            startup.fail()
            throw error
        }
        try? await gracefulShutdown()
        let counters = outbox.snapshot
        logger.info(
            "stopped: \(counters.published) messages published, \(counters.depth) unsent, \(counters.droppedOverflow) dropped"
        )
        if let durable = publisher.durableCounters {
            logger.info(
                "durable outbox: \(durable.acknowledged) acknowledged, \(durable.depth) kept on disk for the next start, \(durable.dropped) dropped"
            )
        }
        health.write(.stopped, lastError: nil, failures: 0, retryIn: nil)
    }

    private func boot() throws {
        let boot = try host.incrementBootCount()
        bootCount.value = boot
        logger.info(
            "motion-agent \(AgentVersion.version) starting",
            metadata: ["agent.device": "\(deviceID)", "agent.boot": "\(boot)", "agent.source": "\(sourceSummary)"]
        )
        try controller.start()
        if let saved = estimatorStore.load() {
            _ = controller.withDeviceMotion { $0.restore(saved) }
            logger.info("restored gyroscope bias and magnetometer calibration from \(estimatorStore.path)")
        }
        host.notifyServiceManager("READY=1\nSTATUS=acquiring from \(sourceSummary)")
        startup.open(bootCount: boot)
    }
}
