/// The fields every stream message carries (docs/payloads.md, "Common fields").
public struct MessageEnvelope: Sendable, Hashable {
    /// Rises by one per sample, per topic, from 1 at agent start.
    public var seq: UInt64
    /// The sensor clock, s.
    public var timestamp: Double
    /// Wall-clock Unix time of the sample, s.
    public var time: Double
    /// False while the system clock is not synchronized; then `time` may be far off. Binary batches do not carry
    /// it, so their samples decode as synchronized.
    public var clockSynchronized: Bool

    public init(seq: UInt64, timestamp: Double, time: Double, clockSynchronized: Bool = true) {
        self.seq = seq
        self.timestamp = timestamp
        self.time = time
        self.clockSynchronized = clockSynchronized
    }

    /// Starts the message's object: `{"seq":…,"timestamp":…,"time":…` and `"clockSynchronized":false` only while
    /// the clock is not synchronized. The payload's own fields follow, then `}`.
    public func open(into b: inout JSONBuffer) {
        b.reset()
        b.raw("{\"seq\":")
        b.unsigned(seq)
        b.raw(",\"timestamp\":")
        b.number(timestamp, decimals: 6)
        b.raw(",\"time\":")
        b.number(time, decimals: 6)
        if !clockSynchronized { b.raw(",\"clockSynchronized\":false") }
    }
}
