import MotionModel

/// Reads binary batches (`BinaryBatchLayout`) strictly: the magic, the kind, a version of that kind it knows
/// (device motion: 1 or 2), reserved bytes and flags, and the exact length must all match, so a subscriber (or the
/// benchmark, or a test) notices any drift from the documented layout instead of misreading it.
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
        guard let kind = BinaryBatchLayout.Kind(rawValue: bytes[4]) else {
            throw WireDecodingError("binary batch kind \(bytes[4]) is not one of 1…4")
        }
        let version = bytes[BinaryBatchLayout.versionOffset]
        guard kind.readableVersions.contains(version), let size = kind.recordSize(version: version) else {
            let known = kind.readableVersions.map(String.init).joined(separator: " or ")
            throw WireDecodingError("binary batch version \(version), expected \(known)")
        }
        if let expected, kind != expected {
            throw WireDecodingError("binary batch kind \(bytes[4]), expected \(expected.rawValue)")
        }
        guard bytes[5] == 0 else { throw WireDecodingError("binary batch reserved byte is \(bytes[5]), not 0") }
        let count = Int(unsigned(bytes, at: BinaryBatchLayout.countOffset, size: 2))
        let firstSeq = unsigned(bytes, at: BinaryBatchLayout.firstSeqOffset, size: 8)
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
                do {
                    payload = .deviceMotion(try deviceMotion(bytes, r, version: version, timestamp: timestamp))
                } catch {
                    throw WireDecodingError("record \(i): \(error.description)")
                }
            }
            messages.append(WireMessage(envelope: envelope, payload: payload))
        }
        return messages
    }

    /// The device-motion record at `r`: version 1 (no accuracies: −1, no relative attitude) or 2.
    private static func deviceMotion(
        _ bytes: [UInt8],
        _ r: Int,
        version: UInt8,
        timestamp: Double
    ) throws(WireDecodingError) -> DeviceMotion {
        typealias Field = BinaryBatchLayout.DeviceMotionField
        guard let accuracy = BinaryBatchLayout.accuracy(code: bytes[r + Field.accuracy]) else {
            throw WireDecodingError("magnetic field accuracy \(bytes[r + Field.accuracy]) is not one of 0…3")
        }
        guard let frame = BinaryBatchLayout.referenceFrame(code: bytes[r + Field.referenceFrame]) else {
            throw WireDecodingError("reference frame \(bytes[r + Field.referenceFrame]) is not one of 0…3")
        }
        let flags = bytes[r + Field.flags]
        if version == 1, flags != 0 || bytes[r + Field.reserved] != 0 {
            throw WireDecodingError("reserved bytes are \(flags), \(bytes[r + Field.reserved]), not 0 in version 1")
        }
        guard flags & ~Field.relativeAttitudePresent == 0 else {
            throw WireDecodingError("flags byte \(flags) sets bits other than bit 0 (relative attitude)")
        }
        guard bytes[r + Field.reserved] == 0 else {
            throw WireDecodingError("reserved byte is \(bytes[r + Field.reserved]), not 0")
        }
        var motion = DeviceMotion(
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
        guard version >= 2 else { return motion }
        motion.inclinationAccuracy = f32(bytes, r + Field.inclinationAccuracy)
        motion.headingAccuracy = f32(bytes, r + Field.headingAccuracy)
        let relative = r + Field.relativeQuaternion
        guard flags & Field.relativeAttitudePresent != 0 else {
            guard bytes[relative..<(r + Field.referenceTime + 8)].allSatisfy({ $0 == 0 }) else {
                throw WireDecodingError("relative attitude bytes are not all 0 while its flag (bit 0) is clear")
            }
            return motion
        }
        motion.relativeAttitude = RelativeAttitude(
            quaternion: Quaternion(
                w: f32(bytes, relative + 12),
                x: f32(bytes, relative),
                y: f32(bytes, relative + 4),
                z: f32(bytes, relative + 8)
            ),
            referenceTime: f64(bytes, r + Field.referenceTime)
        )
        return motion
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
