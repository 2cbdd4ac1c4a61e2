import AgentConfig
import MotionModel

/// What the hub needs from a published stream: which sensors it reads and at what rate, and a per-sample
/// entry point that decides, encodes and queues. Implementations are classes owned by the hub and called only
/// under the hub's lock, so they keep mutable state (sequence numbers, decimators, buffers) without locks of
/// their own — which is why they may declare `@unchecked Sendable`.
public protocol MotionStream: AnyObject, Sendable {
    var name: StreamName { get }
    /// Sensors this stream needs switched on.
    var requiredSensors: Set<SensorType> { get }
    var settings: StreamSettings { get }
    /// The rate the stream actually delivers at, after clamping to the hardware; 0 while stopped.
    var effectiveRateHz: Double { get }

    /// Applies new settings and the hardware rate the planner chose for the stream's sensors.
    func configure(settings: StreamSettings, hardwareRateHz: Double, topicID: Int)
    /// Sees every sample from the hub; publishes when due.
    func consume(_ sample: IMUSample, context: inout StreamContext)
}

/// What a stream writes into: the outbox, the shared encoding buffer and the wall clock.
public struct StreamContext: ~Copyable {
    public let outbox: Outbox
    public var buffer: JSONBuffer
    public var clock: WallClock

    public init(outbox: Outbox, bufferCapacity: Int = 16_384) {
        self.outbox = outbox
        buffer = JSONBuffer(capacity: bufferCapacity)
        clock = WallClock()
    }

    /// Queues what is in the buffer for `topicID`.
    public mutating func publishBuffer(topicID: Int, settings: StreamSettings) {
        let outbox = self.outbox
        buffer.withBytes { bytes in
            _ = outbox.enqueue(topicID: topicID, qos: settings.qos, retain: settings.retain, payload: bytes)
        }
    }
}
