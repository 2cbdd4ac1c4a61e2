extension MotionAgent {
    /// The outbox's and the hub's counters, read under their locks (cheap: two small copies).
    public func healthCounters() -> HealthCounters {
        HealthCounters(outbox: outboxCounters, hub: hubCounters)
    }
}
