import MotionModel

/// Reads binary batches (`BinaryBatchLayout`) strictly: the magic, version, kind, reserved bytes and the exact
/// length must all match, so a subscriber (or the benchmark, or a test) notices any drift from the documented
/// layout.
public enum BinaryBatchReader {
    /// Whether `bytes` start like a binary batch rather than a JSON object.
    public static func isBinary(_ bytes: [UInt8]) -> Bool {
        bytes.first == BinaryBatchLayout.magic.0
    }

    /// The batch's samples. `kind`: the kind the topic must carry (nil: any).
    public static func decode(
        _ bytes: [UInt8],
        kind expected: BinaryBatchLayout.Kind? = nil
    ) throws(WireDecodingError) -> [WireMessage] {
        let header = BinaryBatchLayout.headerSize
        guard bytes.count >= header else {
            throw WireDecodingError("binary payload of \(bytes.count) bytes, shorter than its 16-byte header")
        }
        let magic = BinaryBatchLayout.magic
        guard bytes[0] == magic.0, bytes[1] == magic.1, bytes[2] == magic.2 else {
            throw WireDecodingError("binary payload without the MAB magic")
        }
        guard bytes[3] == BinaryBatchLayout.version else {
            throw WireDecodingError("binary batch version \(bytes[3]), expected \(BinaryBatchLayout.version)")
        }
        guard let kind = BinaryBatchLayout.Kind(rawValue: bytes[4]) else {
            throw WireDecodingError("binary batch kind \(bytes[4]) is not one of 1…4")
        }
        if let expected, kind != expected {
            throw WireDecodingError("binary batch kind \(bytes[4]), expected \(expected.rawValue)")
        }
        guard bytes[5] == 0 else { throw WireDecodingError("binary batch reserved byte is \(bytes[5]), not 0") }
        let count = Int(unsigned(bytes, at: BinaryBatchLayout.countOffset, size: 2))
        let firstSeq = unsigned(bytes, at: BinaryBatchLayout.firstSeqOffset, size: 8)
        let size = kind.recordSize
        guard bytes.count == header + count * size else {
            throw WireDecodingError(
                "binary batch of \(bytes.count) bytes for \(count) records of \(size) bytes"
                    + " (expected \(header + count * size))"
            )
        }
        var messages: [WireMessage] = []
        messages.reserveCapacity(count)
        for i in 0..<count {
            let r = header + i * size
            let timestamp = f64(bytes, r)
            let envelope = MessageEnvelope(seq: firstSeq &+ UInt64(i), timestamp: timestamp, time: f64(bytes, r + 8))
            let payload: StreamPayload
            switch kind {
            case .accelerometer: payload = .acceleration(vector(bytes, r + 16))
            case .gyroscope: payload = .rotationRate(vector(bytes, r + 16))
            case .magnetometer: payload = .magneticField(vector(bytes, r + 16))
            case .deviceMotion:
                guard let accuracy = BinaryBatchLayout.accuracy(code: bytes[r + 84]) else {
                    throw WireDecodingError("record \(i): magnetic field accuracy \(bytes[r + 84]) is not one of 0…3")
                }
                guard let frame = BinaryBatchLayout.referenceFrame(code: bytes[r + 85]) else {
                    throw WireDecodingError("record \(i): reference frame \(bytes[r + 85]) is not one of 0…3")
                }
                payload = .deviceMotion(
                    DeviceMotion(
                        timestamp: timestamp,
                        attitude: Quaternion(
                            w: f32(bytes, r + 28),
                            x: f32(bytes, r + 16),
                            y: f32(bytes, r + 20),
                            z: f32(bytes, r + 24)
                        ),
                        rotationRate: vector(bytes, r + 32),
                        gravity: vector(bytes, r + 44),
                        userAcceleration: vector(bytes, r + 56),
                        magneticField: vector(bytes, r + 68),
                        magneticFieldAccuracy: accuracy,
                        heading: f32(bytes, r + 80),
                        referenceFrame: frame
                    )
                )
            }
            messages.append(WireMessage(envelope: envelope, payload: payload))
        }
        return messages
    }

    /// The unsigned little-endian integer of `size` bytes at `offset`.
    private static func unsigned(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in (0..<size).reversed() { value = value << 8 | UInt64(bytes[offset + i]) }
        return value
    }

    private static func f64(_ bytes: [UInt8], _ offset: Int) -> Double {
        Double(bitPattern: unsigned(bytes, at: offset, size: 8))
    }

    private static func f32(_ bytes: [UInt8], _ offset: Int) -> Double {
        Double(Float(bitPattern: UInt32(unsigned(bytes, at: offset, size: 4))))
    }

    private static func vector(_ bytes: [UInt8], _ offset: Int) -> Vector3 {
        Vector3(f32(bytes, offset), f32(bytes, offset + 4), f32(bytes, offset + 8))
    }
}
