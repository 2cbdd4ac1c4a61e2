import AgentConfig
import AgentPorts
import MotionModel
import MotionWire

/// Packs a stream's samples into batch messages (Core Motion's batched sensor data): N samples per message as
/// `{"batch": [sample, …]}` in JSON, or the compact little-endian binary layout below. Buffers are reserved
/// when the batch size is set, so batching allocates nothing per sample.
///
/// Binary layout, version 1 (all little-endian):
/// - header, 16 bytes: `"MAB"` (0x4D 0x41 0x42), version u8 = 1, kind u8 (1 accelerometer, 2 gyroscope,
///   3 magnetometer, 4 device-motion), reserved u8 = 0, count u16, seq of the first sample u64;
/// - then `count` records: raw sensors 28 bytes — timestamp f64 (s, sensor clock), time f64 (Unix s), x, y, z
///   f32 (g, rad/s or µT); device motion 88 bytes — timestamp f64, time f64, quaternion x, y, z, w f32,
///   rotationRate xyz f32, gravity xyz f32, userAcceleration xyz f32, magneticField xyz f32, heading f32,
///   accuracy u8 (0 uncalibrated … 3 high), referenceFrame u8 (0 xArbitraryZVertical, 1 …CorrectedZVertical,
///   2 xMagneticNorthZVertical, 3 xTrueNorthZVertical), reserved u16.
public struct SampleBatcher: ~Copyable {
    public enum Kind: UInt8 {
        case accelerometer = 1
        case gyroscope = 2
        case magnetometer = 3
        case deviceMotion = 4

        var recordSize: Int { self == .deviceMotion ? 88 : 28 }
    }

    public static let headerSize = 16
    public let kind: Kind
    public private(set) var size = 1
    public private(set) var encoding = StreamEncoding.json
    private var json = JSONBuffer(capacity: 0)
    private var binary: [UInt8] = []
    public private(set) var count = 0

    public init(kind: Kind) {
        self.kind = kind
    }

    /// Whether samples go out one per message (no batching).
    public var isSingle: Bool { size <= 1 }

    /// Sets the batch size and encoding; any partial batch must have been flushed first.
    public mutating func configure(size: Int, encoding: StreamEncoding, jsonBytesPerSample: Int) {
        self.size = max(1, size)
        self.encoding = encoding
        count = 0
        json = JSONBuffer(capacity: self.size > 1 && encoding == .json ? self.size * jsonBytesPerSample + 64 : 0)
        binary = []
        if self.size > 1 && encoding == .binary {
            binary.reserveCapacity(Self.headerSize + self.size * kind.recordSize)
        }
    }

    /// Adds one sample already encoded as its standalone JSON object in `context.buffer`, publishing when
    /// the batch is full.
    public mutating func addJSON(seq: UInt64, topicID: Int, settings: StreamSettings, context: inout StreamContext) {
        json.byte(count == 0 ? UInt8(ascii: "[") : UInt8(ascii: ","))
        context.buffer.withBytes { json.append($0) }
        count += 1
        if count >= size { flush(topicID: topicID, settings: settings, context: &context) }
    }

    /// Adds one binary record written by `write`, publishing when the batch is full.
    public mutating func addBinary(
        seq: UInt64,
        topicID: Int,
        settings: StreamSettings,
        context: inout StreamContext,
        _ write: (inout [UInt8]) -> Void
    ) {
        if count == 0 {
            binary.removeAll(keepingCapacity: true)
            // Appended byte by byte: an array literal here would be a heap allocation per batch.
            binary.append(0x4D)
            binary.append(0x41)
            binary.append(0x42)
            binary.append(1)
            binary.append(kind.rawValue)
            binary.append(0)
            binary.append(0)
            binary.append(0)
            BinaryRecord.append(seq, to: &binary)
        }
        write(&binary)
        count += 1
        if count >= size { flush(topicID: topicID, settings: settings, context: &context) }
    }

    /// Publishes a partial batch (at reconfiguration and shutdown) so no sample is lost.
    public mutating func flush(topicID: Int, settings: StreamSettings, context: inout StreamContext) {
        guard count > 0, topicID >= 0 else { return }
        let outbox = context.outbox
        switch encoding {
        case .json:
            // The array was opened with "[": wrap it as {"batch":[…]}.
            context.buffer.reset()
            context.buffer.raw("{\"batch\":")
            json.withBytes { context.buffer.append($0) }
            context.buffer.raw("]}")
            context.publishBuffer(topicID: topicID, settings: settings)
            json.reset()
        case .binary:
            binary[6] = UInt8(truncatingIfNeeded: count)
            binary[7] = UInt8(truncatingIfNeeded: count >> 8)
            binary.withUnsafeBytes {
                _ = outbox.enqueue(
                    topicID: topicID,
                    qos: settings.qos,
                    retain: settings.retain,
                    payload: $0,
                    durable: settings.durable && settings.qos > 0
                )
            }
        }
        count = 0
    }
}

/// Little-endian appends for the binary batch records.
public enum BinaryRecord {
    @inline(__always)
    public static func append(_ v: UInt64, to b: inout [UInt8]) {
        var x = v.littleEndian
        withUnsafeBytes(of: &x) { b.append(contentsOf: $0) }
    }

    @inline(__always)
    public static func append(_ v: Double, to b: inout [UInt8]) {
        append(v.bitPattern, to: &b)
    }

    @inline(__always)
    public static func append(_ v: Float, to b: inout [UInt8]) {
        var x = v.bitPattern.littleEndian
        withUnsafeBytes(of: &x) { b.append(contentsOf: $0) }
    }

    @inline(__always)
    public static func append(_ v: Vector3, to b: inout [UInt8]) {
        append(Float(v.x), to: &b)
        append(Float(v.y), to: &b)
        append(Float(v.z), to: &b)
    }
}
