import MotionModel
import MotionWire
import Testing

/// The binary batch layout ("MAB": raw sensors version 1, device motion version 2, docs/payloads.md "Batched
/// streams") pinned byte for byte, and read back; device motion's version 1 is still read.
@Suite struct BinaryBatchGoldenTests {
    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    private static func bytes(_ writer: borrowing BinaryBatchWriter) -> [UInt8] {
        writer.withBytes { Array($0) }
    }

    static let gyroscope = [
        WireMessage(
            envelope: MessageEnvelope(seq: 258, timestamp: 10, time: 1_700_000_000.5),
            payload: .rotationRate(Vector3(0.5, -0.25, 1))
        ),
        WireMessage(
            envelope: MessageEnvelope(seq: 259, timestamp: 10.005, time: 1_700_000_000.505),
            payload: .rotationRate(Vector3(-2, 0, 0.125))
        ),
    ]

    @Test func rawRecordsFollowTheDocumentedLayout() throws {
        var writer = BinaryBatchWriter(kind: .gyroscope)
        writer.reserve(records: 2)
        for m in Self.gyroscope {
            let accepted = writer.append(m.envelope, m.payload)
            #expect(accepted)
        }
        let bytes = Self.bytes(writer)
        // Header: "MAB", version 1, kind 2, reserved 0, count 2 (u16 LE), first seq 258 (u64 LE).
        #expect(Self.hex(Array(bytes[0..<16])) == "4d414201020002000201000000000000")
        #expect(bytes.count == 16 + 2 * 28)
        // Record 1: timestamp 10.0 f64, time 1700000000.5 f64, x 0.5 y -0.25 z 1.0 f32, all little-endian.
        #expect(
            Self.hex(Array(bytes[16..<44]))
                == "0000000000002440" + "00002040fc54d941" + "0000003f" + "000080be" + "0000803f"
        )
        #expect(try BinaryBatchReader.decode(bytes, kind: .gyroscope) == Self.gyroscope)
        #expect(try PayloadDecoder.decode(bytes, kind: .gyroscope) == Self.gyroscope)
    }

    /// The device-motion sample of the goldens below (its attitude accuracies exactly representable as f32).
    static let motion = DeviceMotion(
        timestamp: 1,
        attitude: Quaternion(w: 0.8, x: 0.6, y: 0, z: 0),
        rotationRate: Vector3(1, 2, 3),
        gravity: Vector3(0, 0, -1),
        userAcceleration: Vector3(0.5, 0, 0),
        magneticField: Vector3(16, 8, -46),
        magneticFieldAccuracy: .medium,
        heading: 90,
        referenceFrame: .xTrueNorthZVertical,
        inclinationAccuracy: 0.5,
        headingAccuracy: 1.875
    )

    /// The first 84 bytes of a device-motion record of `motion`, the same in versions 1 and 2.
    static let motionRecordStart =
        "000000000000f03f" + "0000000000000040"  // timestamp, time
        + "9a99193f" + "00000000" + "00000000" + "cdcc4c3f"  // quaternion x y z w
        + "0000803f" + "00000040" + "00004040"  // rotationRate
        + "00000000" + "00000000" + "000080bf"  // gravity
        + "0000003f" + "00000000" + "00000000"  // userAcceleration
        + "00008041" + "00000041" + "000038c2"  // magneticField
        + "0000b442"  // heading

    /// `motion`'s bytes in version 1 (what agents before the attitude accuracies wrote): 88 bytes, no accuracies.
    static let motionVersion1 =
        "4d414201040001000100000000000000"  // "MAB", version 1, kind 4, count 1, first seq 1
        + motionRecordStart + "02" + "03" + "0000"  // accuracy medium, frame xTrueNorthZVertical, reserved

    private static func writeOne(_ motion: DeviceMotion, seq: UInt64 = 1) -> [UInt8] {
        var writer = BinaryBatchWriter(kind: .deviceMotion)
        writer.reserve(records: 1)
        let accepted = writer.append(
            MessageEnvelope(seq: seq, timestamp: motion.timestamp, time: 2),
            .deviceMotion(motion)
        )
        #expect(accepted)
        return bytes(writer)
    }

    private static func readOne(_ bytes: [UInt8]) throws -> DeviceMotion? {
        let decoded = try BinaryBatchReader.decode(bytes, kind: .deviceMotion)
        #expect(decoded.count == 1)
        #expect(decoded.first?.envelope == MessageEnvelope(seq: 1, timestamp: 1, time: 2))
        guard case .deviceMotion(let back) = decoded.first?.payload else { return nil }
        #expect(try PayloadDecoder.decode(bytes, kind: .deviceMotion) == decoded)
        return back
    }

    /// `motion` as it comes back from f32: 0.6 and 0.8 become their nearest floats, the rest is exact.
    private static func throughFloat(_ motion: DeviceMotion) -> DeviceMotion {
        var m = motion
        let q = motion.attitude
        m.attitude = Quaternion(
            w: Double(Float(q.w)),
            x: Double(Float(q.x)),
            y: Double(Float(q.y)),
            z: Double(Float(q.z))
        )
        if let r = motion.relativeAttitude?.quaternion {
            m.relativeAttitude?.quaternion = Quaternion(
                w: Double(Float(r.w)),
                x: Double(Float(r.x)),
                y: Double(Float(r.y)),
                z: Double(Float(r.z))
            )
        }
        return m
    }

    @Test func deviceMotionRecordsFollowTheDocumentedLayout() throws {
        let bytes = Self.writeOne(Self.motion)
        #expect(bytes.count == 16 + 120)
        // "MAB", version 2 (device motion's layout with the accuracies), kind 4, count 1, first seq 1.
        #expect(Self.hex(Array(bytes[0..<16])) == "4d414202040001000100000000000000")
        #expect(
            Self.hex(Array(bytes[16...]))
                == Self.motionRecordStart
                + "02" + "03" + "00" + "00"  // accuracy medium, xTrueNorthZVertical, flags 0 (no reference), reserved
                + "0000003f" + "0000f03f"  // inclinationAccuracy 0.5°, headingAccuracy 1.875°
                + String(repeating: "0", count: 48)  // no relative attitude: 24 zero bytes
        )
        let back = try #require(try Self.readOne(bytes))
        #expect(back.attitude == Quaternion(w: Double(Float(0.8)), x: Double(Float(0.6)), y: 0, z: 0))
        #expect(back == Self.throughFloat(Self.motion), "accuracies exact, relativeAttitude nil")
        #expect(back.inclinationAccuracy == 0.5 && back.headingAccuracy == 1.875 && back.relativeAttitude == nil)
    }

    @Test func aRelativeAttitudeTravelsWithItsReferenceTime() throws {
        var motion = Self.motion
        motion.relativeAttitude = RelativeAttitude(
            quaternion: Quaternion(w: 0.8, x: 0, y: 0.6, z: 0),
            referenceTime: 1_795_241_100.25
        )
        let bytes = Self.writeOne(motion)
        #expect(bytes.count == 16 + 120)
        #expect(
            Self.hex(Array(bytes[16...]))
                == Self.motionRecordStart
                + "02" + "03" + "01" + "00"  // flags bit 0: a relative attitude follows
                + "0000003f" + "0000f03f"
                + "00000000" + "9a99193f" + "00000000" + "cdcc4c3f"  // relative quaternion x y z w
                + "000010234dc0da41"  // referenceTime 1795241100.25 f64
        )
        let back = try #require(try Self.readOne(bytes))
        #expect(back == Self.throughFloat(motion))
        #expect(back.relativeAttitude?.referenceTime == 1_795_241_100.25, "f64: the capture time to the bit")
        // A batch mixes records with and without: the flag is per record (a reference set or cleared mid-batch).
        var writer = BinaryBatchWriter(kind: .deviceMotion)
        writer.reserve(records: 2)
        writer.append(MessageEnvelope(seq: 7, timestamp: 1, time: 2), .deviceMotion(Self.motion))
        writer.append(MessageEnvelope(seq: 8, timestamp: 1, time: 2), .deviceMotion(motion))
        let both = try BinaryBatchReader.decode(Self.bytes(writer)).map(\.payload)
        #expect(both == [.deviceMotion(Self.throughFloat(Self.motion)), .deviceMotion(Self.throughFloat(motion))])
    }

    /// −1 means "none": the heading accuracy in xArbitraryZVertical, either value where the model gave none.
    @Test func minusOneTravelsExactly() throws {
        var motion = Self.motion
        motion.referenceFrame = .xArbitraryZVertical
        motion.heading = -1
        motion.headingAccuracy = -1
        motion.inclinationAccuracy = -1
        let bytes = Self.writeOne(motion)
        #expect(Self.hex(Array(bytes[(16 + 84)..<(16 + 96)])) == "02" + "00" + "00" + "00" + "000080bf" + "000080bf")
        let back = try #require(try Self.readOne(bytes))
        #expect(back.headingAccuracy == -1 && back.inclinationAccuracy == -1 && back.heading == -1)
        #expect(back == Self.throughFloat(motion))
    }

    /// Batches from agents before version 2 (or recordings of them) still read: no accuracies (−1), no relative
    /// attitude.
    @Test func version1DeviceMotionRecordsStillRead() throws {
        let bytes = Self.bytes(fromHex: Self.motionVersion1)
        #expect(bytes.count == 16 + 88)
        let back = try #require(try Self.readOne(bytes))
        var expected = Self.throughFloat(Self.motion)
        expected.inclinationAccuracy = -1
        expected.headingAccuracy = -1
        #expect(back == expected)
    }

    /// A reader of version 1 only looks at byte 3 and refuses anything but 1 (its check is the line
    /// `bytes[3] == 1`; clients/python ≤ 0.1 says "unsupported binary batch version 2"); this reader refuses what
    /// it does not know the same way, and every byte that version 2 reserves.
    @Test func version2IsStrict() throws {
        var motion = Self.motion
        motion.relativeAttitude = RelativeAttitude(quaternion: Quaternion(w: 1, x: 0, y: 0, z: 0), referenceTime: 5)
        let good = Self.writeOne(Self.motion)
        let withReference = Self.writeOne(motion)
        #expect(good[3] == 2 && withReference[3] == 2, "device motion is written as version 2, never 1")
        func refused(_ base: [UInt8], _ change: (inout [UInt8]) -> Void) -> String? {
            var bytes = base
            change(&bytes)
            do {
                _ = try BinaryBatchReader.decode(bytes, kind: .deviceMotion)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refused(good) { _ in } == nil)
        #expect(refused(withReference) { _ in } == nil)
        #expect(refused(good) { $0[3] = 3 } == "binary batch version 3, expected 1 or 2")
        #expect(refused(good) { $0[3] = 0 } == "binary batch version 0, expected 1 or 2")
        // Version 2's 120-byte records under a version-1 header: the length gives it away.
        #expect(refused(good) { $0[3] = 1 } == "binary batch of 136 bytes for 1 records of 88 bytes (expected 104)")
        #expect(
            refused(good) { $0.removeLast() } == "binary batch of 135 bytes for 1 records of 120 bytes (expected 136)"
        )
        #expect(
            refused(good) { $0[16 + 86] = 2 } == "record 0: flags byte 2 sets bits other than bit 0 (relative attitude)"
        )
        #expect(refused(good) { $0[16 + 87] = 1 } == "record 0: reserved byte is 1, not 0")
        #expect(
            refused(good) { $0[16 + 119] = 1 }
                == "record 0: relative attitude bytes are not all 0 while its flag (bit 0) is clear"
        )
        #expect(
            refused(withReference) { $0[16 + 86] = 0 }
                == "record 0: relative attitude bytes are not all 0 while its flag (bit 0) is clear"
        )
        #expect(refused(good) { $0[16 + 84] = 4 } == "record 0: magnetic field accuracy 4 is not one of 0…3")
        #expect(refused(good) { $0[16 + 85] = 4 } == "record 0: reference frame 4 is not one of 0…3")
        let version1 = Self.bytes(fromHex: Self.motionVersion1)
        #expect(refused(version1) { _ in } == nil)
        #expect(refused(version1) { $0[16 + 86] = 1 } == "record 0: reserved bytes are 1, 0, not 0 in version 1")
        // Raw sensors have only version 1.
        var gyroscope = BinaryBatchWriter(kind: .gyroscope)
        gyroscope.reserve(records: 1)
        gyroscope.append(Self.gyroscope[0].envelope, Self.gyroscope[0].payload)
        var raw = Self.bytes(gyroscope)
        #expect(raw[3] == 1)
        raw[3] = 2
        #expect(throws: WireDecodingError("binary batch version 2, expected 1")) {
            try BinaryBatchReader.decode(raw)
        }
    }

    private static func bytes(fromHex hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let next = hex.index(i, offsetBy: 2)
            out.append(UInt8(hex[i..<next], radix: 16)!)
            i = next
        }
        return out
    }

    @Test func aPayloadOfAnotherKindIsRefused() {
        var writer = BinaryBatchWriter(kind: .accelerometer)
        writer.reserve(records: 1)
        let accepted = writer.append(MessageEnvelope(seq: 1, timestamp: 0, time: 0), .rotationRate(.zero))
        #expect(!accepted)
        #expect(writer.count == 0)
    }

    @Test func theCountFollowsEachRecordAndClearStartsANewBatch() throws {
        var writer = BinaryBatchWriter(kind: .gyroscope)
        writer.reserve(records: 2)
        writer.append(Self.gyroscope[0].envelope, Self.gyroscope[0].payload)
        let first = Self.bytes(writer)
        #expect(try BinaryBatchReader.decode(first) == [Self.gyroscope[0]])
        writer.clear()
        writer.append(Self.gyroscope[1].envelope, Self.gyroscope[1].payload)
        let second = Self.bytes(writer)
        #expect(try BinaryBatchReader.decode(second) == [Self.gyroscope[1]], "seq 259 heads the header")
    }

    @Test func theReaderIsStrict() throws {
        var writer = BinaryBatchWriter(kind: .gyroscope)
        writer.reserve(records: 2)
        for m in Self.gyroscope { writer.append(m.envelope, m.payload) }
        let good = Self.bytes(writer)
        func refused(_ change: (inout [UInt8]) -> Void, kind: BinaryBatchLayout.Kind? = .gyroscope) -> String? {
            var bytes = good
            change(&bytes)
            do {
                _ = try BinaryBatchReader.decode(bytes, kind: kind)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refused { $0 = Array($0.prefix(10)) } == "binary payload of 10 bytes, shorter than its 16-byte header")
        #expect(refused { $0[1] = 0 } == "binary payload without the MAB magic")
        #expect(refused { $0[3] = 2 } == "binary batch version 2, expected 1")
        #expect(refused({ _ in }, kind: .accelerometer) == "binary batch kind 2, expected 1")
        #expect(refused { $0[4] = 9 } == "binary batch kind 9 is not one of 1…4")
        #expect(refused { $0[5] = 1 } == "binary batch reserved byte is 1, not 0")
        #expect(refused { $0.removeLast() } == "binary batch of 71 bytes for 2 records of 28 bytes (expected 72)")
        #expect(refused { _ in } == nil)
        #expect(throws: WireDecodingError("a binary payload on activity, which is only ever JSON")) {
            try PayloadDecoder.decode(good, kind: .activity)
        }
    }
}
