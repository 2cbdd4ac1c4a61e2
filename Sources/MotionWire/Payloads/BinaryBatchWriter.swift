import MotionModel

/// Writes binary batches (`BinaryBatchLayout`) into storage reserved once for the largest batch, so adding a
/// sample allocates nothing.
public struct BinaryBatchWriter: ~Copyable {
    public let kind: BinaryBatchLayout.Kind
    public private(set) var count = 0
    private var bytes: [UInt8] = []

    public init(kind: BinaryBatchLayout.Kind) {
        self.kind = kind
    }

    /// Reserves room for `records` records and forgets any batch in progress.
    public mutating func reserve(records: Int) {
        bytes = []
        count = 0
        if records > 0 { bytes.reserveCapacity(BinaryBatchLayout.headerSize + records * kind.recordSize) }
    }

    /// Adds one sample, starting a batch (its header carries the sample's seq) when none is in progress. A payload
    /// of another kind is refused: false.
    @discardableResult
    public mutating func append(_ envelope: MessageEnvelope, _ payload: StreamPayload) -> Bool {
        guard payload.kind.binaryKind == kind else { return false }
        if count == 0 { begin(firstSeq: envelope.seq) }
        switch payload {
        case .acceleration(let v), .rotationRate(let v), .magneticField(let v):
            append(timestamp: envelope.timestamp, time: envelope.time, v)
        case .deviceMotion(let m):
            append(m, time: envelope.time)
        default:
            return false
        }
        return true
    }

    /// Forgets the batch (after it was published); the next sample starts a new one.
    public mutating func clear() {
        count = 0
    }

    private mutating func begin(firstSeq: UInt64) {
        bytes.removeAll(keepingCapacity: true)
        // Appended byte by byte: an array literal here would be a heap allocation per batch.
        bytes.append(BinaryBatchLayout.magic.0)
        bytes.append(BinaryBatchLayout.magic.1)
        bytes.append(BinaryBatchLayout.magic.2)
        bytes.append(kind.version)
        bytes.append(kind.rawValue)
        bytes.append(0)
        bytes.append(0)
        bytes.append(0)
        append(firstSeq)
    }

    /// A raw sensor record: sensor timestamp, wall time, x y z.
    private mutating func append(timestamp: Double, time: Double, _ v: Vector3) {
        append(timestamp)
        append(time)
        append(v)
        recordAdded()
    }

    /// A device-motion record (version 2).
    private mutating func append(_ m: DeviceMotion, time: Double) {
        append(m.timestamp)
        append(time)
        append(Float(m.attitude.x))
        append(Float(m.attitude.y))
        append(Float(m.attitude.z))
        append(Float(m.attitude.w))
        append(m.rotationRate)
        append(m.gravity)
        append(m.userAcceleration)
        append(m.magneticField)
        append(Float(m.heading))
        bytes.append(BinaryBatchLayout.code(of: m.magneticFieldAccuracy))
        bytes.append(BinaryBatchLayout.code(of: m.referenceFrame))
        bytes.append(m.relativeAttitude == nil ? 0 : BinaryBatchLayout.DeviceMotionField.relativeAttitudePresent)
        bytes.append(0)
        append(Float(m.inclinationAccuracy))
        append(Float(m.headingAccuracy))
        if let relative = m.relativeAttitude {
            append(Float(relative.quaternion.x))
            append(Float(relative.quaternion.y))
            append(Float(relative.quaternion.z))
            append(Float(relative.quaternion.w))
            append(relative.referenceTime)
        } else {
            // All zero bits (not Float(0) of a −0.0), so a reader can insist on zeros while the flag is clear.
            append(UInt64(0))
            append(UInt64(0))
            append(UInt64(0))
        }
        recordAdded()
    }

    /// Lends the finished batch (its count written into the header) without copying.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    private mutating func recordAdded() {
        count += 1
        bytes[BinaryBatchLayout.countOffset] = UInt8(truncatingIfNeeded: count)
        bytes[BinaryBatchLayout.countOffset + 1] = UInt8(truncatingIfNeeded: count >> 8)
    }

    @inline(__always)
    private mutating func append(_ v: UInt64) {
        var x = v.littleEndian
        withUnsafeBytes(of: &x) { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    private mutating func append(_ v: Double) {
        append(v.bitPattern)
    }

    @inline(__always)
    private mutating func append(_ v: Float) {
        var x = v.bitPattern.littleEndian
        withUnsafeBytes(of: &x) { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    private mutating func append(_ v: Vector3) {
        append(Float(v.x))
        append(Float(v.y))
        append(Float(v.z))
    }
}
