import Foundation

/// The samples of one sample-stream message, decoded only as far as counting and continuity need: each
/// sample's `seq` and sensor `timestamp`. Reads the three shapes of docs/payloads.md: a single JSON sample,
/// a JSON batch `{"batch": [sample, …]}` and the binary batch "MAB" version 1.
///
/// The binary layout is written out here from docs/payloads.md, not taken from `SampleBatcher`, so the
/// benchmark checks the agent against the documentation.
struct BatchPayload {
    struct Sample: Sendable, Hashable {
        var seq: UInt64
        /// Sensor clock, s.
        var timestamp: Double
    }

    struct DecodeError: Error, CustomStringConvertible {
        var description: String
    }

    enum Encoding: String, Sendable {
        case json
        case binary
    }

    var encoding: Encoding
    var samples: [Sample]

    /// Binary batch header: magic "MAB", version, kind, reserved, count u16, first seq u64 (docs/payloads.md).
    static let binaryHeaderBytes = 16
    /// Record sizes by kind, bytes: raw sensors 28 (timestamp f64, time f64, x y z f32), device motion 88.
    static let binaryRecordBytes: [UInt8: Int] = [1: 28, 2: 28, 3: 28, 4: 88]

    /// - Parameter kind: the binary `kind` the stream must carry (1 accelerometer … 4 device-motion).
    init(decoding bytes: [UInt8], kind: UInt8) throws {
        guard let first = bytes.first else { throw DecodeError(description: "empty payload") }
        if first == UInt8(ascii: "M") {
            encoding = .binary
            samples = try Self.decodeBinary(bytes, kind: kind)
        } else {
            encoding = .json
            samples = try Self.decodeJSON(bytes)
        }
    }

    private struct JSONSample: Decodable {
        var seq: UInt64
        var timestamp: Double
    }

    private struct JSONMessage: Decodable {
        var batch: [JSONSample]?
        var seq: UInt64?
        var timestamp: Double?
    }

    private static func decodeJSON(_ bytes: [UInt8]) throws -> [Sample] {
        let message = try JSONDecoder().decode(JSONMessage.self, from: Data(bytes))
        if let batch = message.batch {
            return batch.map { Sample(seq: $0.seq, timestamp: $0.timestamp) }
        }
        guard let seq = message.seq, let timestamp = message.timestamp else {
            throw DecodeError(description: "JSON payload with neither `batch` nor `seq` and `timestamp`")
        }
        return [Sample(seq: seq, timestamp: timestamp)]
    }

    private static func decodeBinary(_ bytes: [UInt8], kind: UInt8) throws -> [Sample] {
        guard bytes.count >= binaryHeaderBytes else {
            throw DecodeError(description: "binary payload of \(bytes.count) bytes, shorter than its 16-byte header")
        }
        guard bytes[0] == 0x4D, bytes[1] == 0x41, bytes[2] == 0x42 else {
            throw DecodeError(description: "binary payload without the MAB magic")
        }
        guard bytes[3] == 1 else { throw DecodeError(description: "binary batch version \(bytes[3]), expected 1") }
        guard bytes[4] == kind else {
            throw DecodeError(description: "binary batch kind \(bytes[4]), expected \(kind)")
        }
        guard bytes[5] == 0 else { throw DecodeError(description: "binary batch reserved byte is \(bytes[5]), not 0") }
        guard let recordBytes = binaryRecordBytes[kind] else {
            throw DecodeError(description: "no record layout for kind \(kind)")
        }
        let count = Int(littleEndian(bytes, at: 6, size: 2))
        let firstSeq = littleEndian(bytes, at: 8, size: 8)
        guard bytes.count == binaryHeaderBytes + count * recordBytes else {
            throw DecodeError(
                description: "binary batch of \(bytes.count) bytes for \(count) records of \(recordBytes) bytes"
                    + " (expected \(binaryHeaderBytes + count * recordBytes))"
            )
        }
        return (0..<count).map { i in
            let timestamp = Double(bitPattern: littleEndian(bytes, at: binaryHeaderBytes + i * recordBytes, size: 8))
            return Sample(seq: firstSeq + UInt64(i), timestamp: timestamp)
        }
    }

    /// The unsigned little-endian integer of `size` bytes at `offset`.
    private static func littleEndian(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in (0..<size).reversed() { value = value << 8 | UInt64(bytes[offset + i]) }
        return value
    }
}
