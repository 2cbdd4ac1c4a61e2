/// How one stream publishes: the runtime-changeable settings of `streams.<name>` in config.yaml.
public struct StreamSettings: Sendable, Equatable {
    public var enabled: Bool
    /// Requested update rate, Hz (> 0, ≤ 1000). Clamped to what the hardware supports; status shows the
    /// effective rate.
    public var rateHz: Double
    /// 0, 1 or 2.
    public var qos: Int
    public var retain: Bool
    /// Samples per message (Core Motion's batched sensor data): 1 publishes every sample on its own; more
    /// packs that many into one message, so high rates cost the broker fewer messages. 1–1000; only the
    /// sample streams (accelerometer, gyroscope, magnetometer, device-motion) batch.
    public var batch: Int
    /// How a batch is encoded: JSON (`{"batch": [...]}`) or the compact little-endian binary layout of
    /// docs/payloads.md. Unbatched messages are always JSON.
    public var encoding: StreamEncoding
    /// Keep the stream's messages on disk (`<state_dir>/outbox/`) until the broker acknowledges them, so
    /// they survive broker outages and agent crashes. Needs QoS ≥ 1.
    public var durable: Bool

    public init(
        enabled: Bool,
        rateHz: Double,
        qos: Int,
        retain: Bool,
        batch: Int = 1,
        encoding: StreamEncoding = .json,
        durable: Bool = false
    ) {
        self.enabled = enabled
        self.rateHz = rateHz
        self.qos = qos
        self.retain = retain
        self.batch = batch
        self.encoding = encoding
        self.durable = durable
    }
}
