/// How one stream publishes: the runtime-changeable settings of `streams.<name>` in config.yaml.
package struct StreamSettings: Sendable, Equatable {
    package var enabled: Bool
    /// Requested update rate, Hz (> 0, ≤ 1000). Clamped to what the hardware supports; status shows the
    /// effective rate.
    package var rateHz: Double
    /// 0, 1 or 2.
    package var qos: Int
    package var retain: Bool
    /// Samples per message (Core Motion's batched sensor data): 1 publishes every sample on its own; more
    /// packs that many into one message, so high rates cost the broker fewer messages. 1–1000; only the
    /// sample streams (accelerometer, gyroscope, magnetometer, device-motion) batch.
    package var batch: Int
    /// How a batch is encoded: JSON (`{"batch": [...]}`) or the compact little-endian binary layout of
    /// docs/payloads.md. Unbatched messages are always JSON.
    package var encoding: StreamEncoding
    /// Keep the stream's messages on disk (`<state_dir>/outbox/`) until the broker acknowledges them, so
    /// they survive broker outages and agent crashes. Needs QoS ≥ 1.
    package var durable: Bool
    /// How long a message stays worth delivering, seconds (1…4294967295); nil: for ever. Sent as the MQTT 5
    /// Message Expiry Interval, less the time the message already waited in the agent, so the broker drops
    /// it for a subscriber that is away longer; the agent's own outbox drops it before sending once it is
    /// older, on MQTT 3.1.1 too.
    package var expirySeconds: Int?

    package init(
        enabled: Bool,
        rateHz: Double,
        qos: Int,
        retain: Bool,
        batch: Int = 1,
        encoding: StreamEncoding = .json,
        durable: Bool = false,
        expirySeconds: Int? = nil
    ) {
        self.enabled = enabled
        self.rateHz = rateHz
        self.qos = qos
        self.retain = retain
        self.batch = batch
        self.encoding = encoding
        self.durable = durable
        self.expirySeconds = expirySeconds
    }

    /// The largest expiry MQTT 5 can carry (a four-byte integer, MQTT 5 §3.3.2.3.3), seconds.
    package static let maximumExpirySeconds = Int(UInt32.max)
}
