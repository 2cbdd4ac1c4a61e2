import AgentConfig
import AgentPorts
import MotionModel
import MotionWire

/// Sends a stream's samples one per message or packed into batches (Core Motion's batched sensor data): N samples
/// per message as `{"batch": [sample, …]}` in JSON, or MotionWire's binary layout (`BinaryBatchLayout`). Buffers
/// are reserved when the batch size is set, so batching allocates nothing per sample.
package struct SampleBatcher: ~Copyable {
    package let kind: BinaryBatchLayout.Kind
    package private(set) var size = 1
    package private(set) var encoding = StreamEncoding.json
    private var json = JSONBatchWriter()
    private var binary: BinaryBatchWriter

    package init(kind: BinaryBatchLayout.Kind) {
        self.kind = kind
        binary = BinaryBatchWriter(kind: kind)
    }

    /// Whether samples go out one per message (no batching).
    package var isSingle: Bool { size <= 1 }

    /// Samples held in the batch in progress.
    package var count: Int { encoding == .binary ? binary.count : json.count }

    /// Sets the batch size and encoding; any partial batch must have been flushed first.
    package mutating func configure(size: Int, encoding: StreamEncoding, jsonBytesPerSample: Int) {
        self.size = max(1, size)
        self.encoding = encoding
        let batched = self.size > 1
        json.reserve(messages: batched && encoding == .json ? self.size : 0, bytesPerMessage: jsonBytesPerSample)
        binary.reserve(records: batched && encoding == .binary ? self.size : 0)
    }

    /// Publishes one sample, or adds it to the batch and publishes the batch when it is full.
    package mutating func add(
        _ payload: StreamPayload,
        seq: UInt64,
        timestamp: Double,
        topicID: Int,
        settings: StreamSettings,
        context: inout StreamContext
    ) {
        if isSingle {
            context.publish(payload, seq: seq, timestamp: timestamp, topicID: topicID, settings: settings)
            return
        }
        context.forwardToSparkplug(payload, timestamp: timestamp)
        switch encoding {
        case .binary:
            binary.append(context.envelope(seq: seq, timestamp: timestamp), payload)
        case .json:
            context.encode(payload, seq: seq, timestamp: timestamp)
            json.add(context.buffer)
        }
        if count >= size { flush(topicID: topicID, settings: settings, context: &context) }
    }

    /// Publishes a partial batch (at reconfiguration and shutdown) so no sample is lost.
    package mutating func flush(topicID: Int, settings: StreamSettings, context: inout StreamContext) {
        guard count > 0, topicID >= 0 else { return }
        switch encoding {
        case .json:
            json.finish(into: &context.buffer)
            context.publishBuffer(topicID: topicID, settings: settings)
        case .binary:
            let outbox = context.outbox
            binary.withBytes {
                _ = outbox.enqueue(
                    topicID: topicID,
                    qos: settings.qos,
                    retain: settings.retain,
                    payload: $0,
                    durable: settings.durable && settings.qos > 0,
                    expirySeconds: UInt32(clamping: settings.expirySeconds ?? 0)
                )
            }
            binary.clear()
        }
    }
}
