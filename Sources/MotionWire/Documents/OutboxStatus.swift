/// The status document's `outbox` object: the memory outbox's counters and, when a stream is durable, the
/// durable log's. Counters count since the agent started; depth and bytes are current.
public struct OutboxStatus: Sendable, Codable, Equatable {
    public var enqueued: UInt64
    public var published: UInt64
    /// Memory-only messages dropped because the outbox was full (oldest first).
    public var droppedOverflow: UInt64
    /// Memory-only messages dropped unsent because they waited longer than their stream's expiry_s.
    public var droppedExpired: UInt64?
    public var rejected: UInt64
    public var failed: UInt64
    public var depth: Int
    public var bytes: Int
    public var durableAppended: UInt64?
    public var durablePublished: UInt64?
    public var durableAcknowledged: UInt64?
    /// Durable messages discarded unacknowledged (outbox.max_bytes, outbox.max_age_s, a full staging ring
    /// or a failed write): exact.
    public var durableDropped: UInt64?
    public var durableRejected: UInt64?
    /// Durable messages not yet acknowledged by the broker.
    public var durableDepth: Int?
    /// Durable messages not yet handed to the MQTT client.
    public var durableBacklog: Int?
    public var durableBytes: Int?
    public var durableSegments: Int?
    /// Durable messages (in `durableDropped` too) that never reached the disk: its file system was full or a
    /// write failed.
    public var durableDroppedNoSpace: UInt64?
    /// Durable messages (in `durableDropped` too) not sent because they were older than their stream's
    /// expiry_s when their turn came.
    public var durableExpired: UInt64?
    /// While the durable log cannot keep everything: what is full, what it does meanwhile, the fix.
    public var durableStorageProblem: String?

    /// A status with every durable counter absent (no stream is durable); the pipeline fills them in.
    public init(
        enqueued: UInt64,
        published: UInt64,
        droppedOverflow: UInt64,
        droppedExpired: UInt64?,
        rejected: UInt64,
        failed: UInt64,
        depth: Int,
        bytes: Int
    ) {
        self.enqueued = enqueued
        self.published = published
        self.droppedOverflow = droppedOverflow
        self.droppedExpired = droppedExpired
        self.rejected = rejected
        self.failed = failed
        self.depth = depth
        self.bytes = bytes
    }
}
