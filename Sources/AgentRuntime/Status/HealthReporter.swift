import AgentPipeline
import AgentPorts
import Foundation
import Logging
import Synchronization

/// The health file (`health.json` in the state directory) that operators and probes read without the broker:
/// the connection's state and, while the durable log cannot keep everything, its storage problem.
final class HealthReporter: Sendable {
    private let host: HostSystem
    private let connections: ConnectionCounters
    private let publisher: OutboxPublisher
    /// The first of `mqtt.servers`, named before any connection attempt chose one.
    private let firstServer: String
    private let clock: any AgentClock
    private let logger: Logger
    /// The health document last written, so a storage change rewrites it with the connection as it was.
    private let last = Mutex<HealthDocument?>(nil)

    init(
        host: HostSystem,
        connections: ConnectionCounters,
        publisher: OutboxPublisher,
        firstServer: String,
        clock: any AgentClock,
        logger: Logger
    ) {
        self.clock = clock
        self.host = host
        self.connections = connections
        self.publisher = publisher
        self.firstServer = firstServer
        self.logger = logger
    }

    func write(
        _ state: HealthDocument.State,
        broker: String? = nil,
        lastError: String?,
        failures: Int,
        retryIn: Double?
    ) {
        let now = clock.realtimeSeconds()
        let document = HealthDocument(
            state: state,
            broker: broker ?? connections.link?.server ?? firstServer,
            lastError: lastError,
            consecutiveFailures: failures,
            nextRetryTime: retryIn.map { now + $0 },
            time: now,
            storageProblem: publisher.durableCounters?.storageProblem
        )
        last.withLock { $0 = document }
        if let error = host.writeHealth(document) {
            logger.warning("cannot write \(host.healthPath): \(error)")
        }
    }

    /// Watches the durable log's storage (every second) and, when its problem starts, changes or ends, says so
    /// in the health file and calls `changed` (the retained status says it too). The log itself logs the
    /// problem once when it starts.
    func watchStorage(changed: @Sendable () -> Void) async {
        var reported: String?
        while (try? await clock.sleep(seconds: 1)) != nil {
            let problem = publisher.durableCounters?.storageProblem
            guard problem != reported else { continue }
            reported = problem
            if let previous = last.withLock({ $0 }) {
                var document = previous
                document.time = clock.realtimeSeconds()
                document.storageProblem = problem
                last.withLock { $0 = document }
                if let error = host.writeHealth(document) {
                    // On a full disk this can fail too: the log line and the status still say it.
                    logger.warning("cannot write \(host.healthPath): \(error)")
                }
            }
            changed()
        }
    }
}
