import MotionWire

extension OutboxStatus {
    /// The status document's `outbox` object from the memory outbox's counters and, when a stream is durable,
    /// the durable log's.
    package init(memory: Outbox.Counters, durable: DurableLog.Counters?) {
        self.init(
            enqueued: memory.enqueued,
            published: memory.published,
            droppedOverflow: memory.droppedOverflow,
            droppedExpired: memory.droppedExpired,
            rejected: memory.rejected,
            failed: memory.failed,
            depth: memory.depth,
            bytes: memory.bytes
        )
        durableAppended = durable?.appended
        durablePublished = durable?.published
        durableAcknowledged = durable?.acknowledged
        durableDropped = durable?.dropped
        durableRejected = durable?.rejected
        durableDepth = durable?.depth
        durableBacklog = durable?.backlog
        durableBytes = durable?.bytes
        durableSegments = durable?.segments
        durableDroppedNoSpace = durable?.droppedNoSpace
        durableExpired = durable?.expired
        durableStorageProblem = durable?.storageProblem
    }
}
