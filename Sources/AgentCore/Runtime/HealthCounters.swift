/// The pipeline's counters at one moment, as `MotionAgent.healthCounters()` hands them to the metrics report.
public struct HealthCounters: Sendable, Equatable {
    public var outbox: Outbox.Counters
    public var hub: SensorHub.Counters

    public init(outbox: Outbox.Counters, hub: SensorHub.Counters) {
        self.outbox = outbox
        self.hub = hub
    }
}
