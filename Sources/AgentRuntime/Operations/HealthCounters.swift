import AgentControl
import AgentPipeline
import AgentPorts
import Integrations
import MotionWire

/// The pipeline's counters at one moment, as `AgentServices.healthCounters()` hands them to the metrics report.
struct HealthCounters: Sendable, Equatable {
    var outbox: Outbox.Counters
    var hub: SensorHub.Counters
    /// The source's per-device acquisition counters, keyed by device id (empty for the simulator and replay).
    var devices: [String: SensorDeviceCounters]
    /// The durable log's counters (the staging ring's drops included), when a stream is durable.
    var durable: DurableLog.Counters?

    init(
        outbox: Outbox.Counters,
        hub: SensorHub.Counters,
        devices: [String: SensorDeviceCounters] = [:],
        durable: DurableLog.Counters? = nil
    ) {
        self.outbox = outbox
        self.hub = hub
        self.devices = devices
        self.durable = durable
    }
}
