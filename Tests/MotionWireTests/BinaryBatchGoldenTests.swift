import MotionModel
import MotionWire
import Testing

/// The binary batch layout ("MAB v1", docs/payloads.md "Batched streams") pinned byte for byte, and read back.
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

    @Test func deviceMotionRecordsFollowTheDocumentedLayout() throws {
        let motion = DeviceMotion(
            timestamp: 1,
            attitude: Quaternion(w: 0.8, x: 0.6, y: 0, z: 0),
            rotationRate: Vector3(1, 2, 3),
            gravity: Vector3(0, 0, -1),
            userAcceleration: Vector3(0.5, 0, 0),
            magneticField: Vector3(16, 8, -46),
            magneticFieldAccuracy: .medium,
            heading: 90,
            referenceFrame: .xTrueNorthZVertical
        )
        let message = WireMessage(
            envelope: MessageEnvelope(seq: 1, timestamp: 1, time: 2),
            payload: .deviceMotion(motion)
        )
        var writer = BinaryBatchWriter(kind: .deviceMotion)
        writer.reserve(records: 1)
        let accepted = writer.append(message.envelope, message.payload)
        #expect(accepted)
        let bytes = Self.bytes(writer)
        #expect(bytes.count == 16 + 88)
        #expect(Self.hex(Array(bytes[0..<16])) == "4d414201040001000100000000000000")
        let record = Array(bytes[16...])
        #expect(
            Self.hex(record)
                == "000000000000f03f" + "0000000000000040"  // timestamp, time
                + "9a99193f" + "00000000" + "00000000" + "cdcc4c3f"  // quaternion x y z w
                + "0000803f" + "00000040" + "00004040"  // rotationRate
                + "00000000" + "00000000" + "000080bf"  // gravity
                + "0000003f" + "00000000" + "00000000"  // userAcceleration
                + "00008041" + "00000041" + "000038c2"  // magneticField
                + "0000b442"  // heading
                + "02" + "03" + "0000"  // accuracy medium, frame xTrueNorthZVertical, reserved
        )
        let decoded = try #require(try BinaryBatchReader.decode(bytes, kind: .deviceMotion).first)
        #expect(decoded.envelope == message.envelope)
        guard case .deviceMotion(let back) = decoded.payload else {
            Issue.record("not device motion: \(decoded.payload)")
            return
        }
        // Attitude travels as f32: 0.6 and 0.8 come back as their nearest floats.
        #expect(back.attitude == Quaternion(w: Double(Float(0.8)), x: Double(Float(0.6)), y: 0, z: 0))
        var expected = motion
        expected.attitude = back.attitude
        #expect(back == expected)
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
