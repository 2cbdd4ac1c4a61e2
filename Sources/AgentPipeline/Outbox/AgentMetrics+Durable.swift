import MotionWire

extension AgentMetrics.Durable {
    /// The metrics' `durable` object from the durable log's counters.
    package init(_ counters: DurableLog.Counters) {
        self.init(
            appended: counters.appended,
            acknowledged: counters.acknowledged,
            dropped: counters.dropped,
            droppedNoSpace: counters.droppedNoSpace,
            expired: counters.expired,
            depth: counters.depth,
            bytes: counters.bytes,
            storageProblem: counters.storageProblem
        )
    }
}
