extension MotionAgent {
    /// The outbox's, the hub's and the source's devices' counters, read under their locks (small copies, once
    /// per metrics interval).
    public func healthCounters() -> HealthCounters {
        HealthCounters(outbox: outboxCounters, hub: hubCounters, devices: source.deviceCounters())
    }
}
