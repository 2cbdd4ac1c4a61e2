import AgentPipeline
import MotionWire

extension AgentMetrics {
    /// The report from the health counters read at one moment and the connection's counters.
    init(
        device: String,
        time: Double,
        uptimeSeconds: Double,
        bootCount: UInt64,
        intervalSeconds: Int,
        counters: HealthCounters,
        connected: Bool,
        connections: ConnectionCounters,
        process: Process
    ) {
        self.init(
            device: device,
            time: time,
            uptimeSeconds: uptimeSeconds,
            bootCount: bootCount,
            intervalSeconds: intervalSeconds,
            samples: Samples(read: counters.hub.samples, invalid: counters.hub.invalidReadings),
            messages: Messages(
                enqueued: counters.outbox.enqueued,
                published: counters.outbox.published,
                failed: counters.outbox.failed,
                rejected: counters.outbox.rejected,
                droppedOverflow: counters.outbox.droppedOverflow,
                droppedExpired: counters.outbox.droppedExpired
            ),
            outbox: OutboxLevel(depth: counters.outbox.depth, bytes: counters.outbox.bytes),
            connection: Connection(
                connected: connected,
                reconnects: connections.reconnects,
                failures: connections.connectionFailures,
                inboundDropped: connections.inboundDropped,
                server: connections.link?.server,
                failovers: connections.link.map { UInt64($0.failovers) }
            ),
            process: process,
            devices: counters.devices,
            durable: counters.durable.map(Durable.init)
        )
    }
}
