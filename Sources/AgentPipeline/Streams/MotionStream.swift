import AgentConfig
import AgentPorts
import MotionModel
import MotionWire

/// What the hub needs from a published stream: which sensors it reads and how fast, and a per-sample entry
/// point that estimates, decides, encodes and queues. Implementations are classes owned by the hub and called
/// only under the hub's lock, so they keep mutable state (sequence numbers, decimators, estimators, buffers)
/// without locks of their own — which is why they may declare `@unchecked Sendable`.
package protocol MotionStream: AnyObject, Sendable {
    var name: StreamName { get }
    /// Sensors without which the stream cannot deliver at all (for availability in status).
    var requiredSensors: Set<SensorType> { get }
    var settings: StreamSettings { get }
    /// The rate the stream actually delivers at, after clamping to the hardware; 0 while stopped.
    var effectiveRateHz: Double { get }

    /// The rate the stream needs from each sensor with its current settings: its publication rate for raw
    /// streams, the estimator's working rate for derived ones. Empty when the stream is stopped.
    func sensorDemandsHz(settings: StreamSettings) -> [SensorType: Double]
    /// Applies new settings and the rates the planner chose for the sensors (absent: off or missing).
    func configure(settings: StreamSettings, sensorRatesHz: [SensorType: Double], topicID: Int)
    /// Whether `consume` does anything with the settings in force (false while stopped): the hub hands samples
    /// only to these. Read after every reconfiguration, under the hub's lock.
    var consumesSamples: Bool { get }
    /// Sees every sample from the hub while `consumesSamples`; publishes when due.
    func consume(_ sample: IMUSample, context: inout StreamContext)
    /// Publishes what is held back (a partial batch) before a reconfiguration or shutdown.
    func flush(context: inout StreamContext)
}

extension MotionStream {
    package func flush(context: inout StreamContext) {}

    /// A stream delivering at some rate.
    package var consumesSamples: Bool { effectiveRateHz > 0 }

    /// The descriptor's sensors (device motion adds the magnetometer in the north frames).
    package var requiredSensors: Set<SensorType> { name.descriptor.requiredSensors }
}

/// What a stream writes into: the outbox, the shared encoding buffer, the wall clock and, with Sparkplug on,
/// Sparkplug's lane (which sees every sample the native topics carry, before batching).
package struct StreamContext: ~Copyable {
    package let outbox: Outbox
    package var buffer: JSONBuffer
    package var clock: WallClock
    package let sparkplug: SparkplugLane?

    package init(
        outbox: Outbox,
        clock: WallClock = WallClock(),
        bufferCapacity: Int = 16_384,
        sparkplug: SparkplugLane? = nil
    ) {
        self.outbox = outbox
        buffer = JSONBuffer(capacity: bufferCapacity)
        self.clock = clock
        self.sparkplug = sparkplug
    }

    /// Hands one sample to Sparkplug's lane, when there is one (measured at `timestamp`, sensor clock).
    @inline(__always)
    package mutating func forwardToSparkplug(_ payload: StreamPayload, timestamp: Double) {
        guard let sparkplug else { return }
        sparkplug.record(payload, wallTimeMs: UInt64(max(0, clock.wallTime(of: timestamp) * 1000)))
    }

    /// Queues what is in the buffer for `topicID`.
    package mutating func publishBuffer(topicID: Int, settings: StreamSettings) {
        let outbox = self.outbox
        buffer.withBytes { bytes in
            _ = outbox.enqueue(
                topicID: topicID,
                qos: settings.qos,
                retain: settings.retain,
                payload: bytes,
                durable: settings.durable && settings.qos > 0,
                expirySeconds: UInt32(clamping: settings.expirySeconds ?? 0)
            )
        }
    }

    /// The common fields of a message: seq, the sensor timestamp, its wall time and whether the system clock is
    /// synchronized (so consumers can tell a board that booted in 1970 from now).
    package mutating func envelope(seq: UInt64, timestamp: Double) -> MessageEnvelope {
        let wall = clock.wallTime(of: timestamp)
        return MessageEnvelope(seq: seq, timestamp: timestamp, time: wall, clockSynchronized: clock.isSynchronized)
    }

    /// Encodes one message into the buffer.
    package mutating func encode(_ payload: StreamPayload, seq: UInt64, timestamp: Double) {
        let envelope = envelope(seq: seq, timestamp: timestamp)
        PayloadEncoder.encode(envelope, payload, into: &buffer)
    }

    /// Encodes one message and queues it for `topicID`.
    package mutating func publish(
        _ payload: StreamPayload,
        seq: UInt64,
        timestamp: Double,
        topicID: Int,
        settings: StreamSettings
    ) {
        forwardToSparkplug(payload, timestamp: timestamp)
        encode(payload, seq: seq, timestamp: timestamp)
        publishBuffer(topicID: topicID, settings: settings)
    }
}
