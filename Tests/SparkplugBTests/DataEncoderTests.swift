import SwiftProtobuf
import Testing

@testable import SparkplugB

/// The hand-written DDATA encoder against swift-protobuf's decoder of the same schema: every value kind, the
/// varint boundaries, and what `SparkplugStamp` adds at publication.
@Suite struct DataEncoderTests {
    private func decode(_ bytes: [UInt8]) throws -> SparkplugPayload { try SparkplugPayload(serializedBytes: bytes) }

    @Test(arguments: [
        SparkplugMetricValue.boolean(true), .boolean(false), .int32(-1), .int32(Int32.min), .uint32(UInt32.max),
        .int64(-42), .int64(Int64.max), .uint64(UInt64.max), .uint64(0), .float(-0.998871), .float(.infinity),
        .double(98.92873), .string("xMagneticNorthZVertical"), .string("µT – ü"), .string(""),
        .dateTime(1_795_241_134_057), .null,
    ])
    func everyValueKindDecodesToTheFieldItsDatatypeNames(_ value: SparkplugMetricValue) throws {
        var encoder = SparkplugDataEncoder()
        encoder.append(alias: 300, timestampMs: 1_795_241_134_057, value: value)
        let payload = try decode(encoder.bytes)
        let metric = try #require(payload.metrics.first)
        #expect(payload.metrics.count == 1)
        #expect(metric.alias == 300)
        #expect(metric.timestamp == 1_795_241_134_057)
        #expect(!metric.hasName, "data carries the alias only (6.4.4)")
        #expect(!metric.hasDatatype)
        switch value {
        case .boolean(let v): #expect(metric.booleanValue == v)
        case .int32(let v): #expect(metric.intValue == UInt32(bitPattern: v))
        case .uint32(let v): #expect(metric.intValue == v)
        case .int64(let v): #expect(metric.longValue == UInt64(bitPattern: v))
        case .uint64(let v), .dateTime(let v): #expect(metric.longValue == v)
        case .float(let v): #expect(metric.floatValue == v)
        case .double(let v): #expect(metric.doubleValue == v)
        case .string(let v): #expect(metric.stringValue == v)
        case .null: #expect(metric.isNull && metric.value == nil)
        }
        // And the same metric built by swift-protobuf encodes to the same bytes.
        var expected = SparkplugPayload.Metric()
        expected.alias = 300
        expected.timestamp = 1_795_241_134_057
        SparkplugBirthEncoder.setValue(value, on: &expected)
        var wrapper = SparkplugPayload()
        wrapper.metrics = [expected]
        #expect(try wrapper.serializedBytes() as [UInt8] == encoder.bytes)
    }

    @Test(arguments: [0, 1, 127, 128, 16383, 16384, UInt64(UInt32.max), UInt64.max - 1, UInt64.max] as [UInt64])
    func varintsAtEveryLengthBoundaryRoundTrip(_ value: UInt64) throws {
        var encoder = SparkplugDataEncoder()
        encoder.append(alias: value, timestampMs: value, value: .uint64(value))
        let metric = try #require(try decode(encoder.bytes).metrics.first)
        #expect(metric.alias == value && metric.timestamp == value && metric.longValue == value)
        #expect(
            ProtobufWire.varintSize(value)
                == {
                    var b: [UInt8] = []
                    ProtobufWire.appendVarint(value, to: &b)
                    return b.count
                }()
        )
    }

    @Test func severalMetricsKeepTheirOrderAndResetKeepsTheCapacity() throws {
        var encoder = SparkplugDataEncoder(capacity: 64)
        for i in 0..<20 { encoder.append(alias: UInt64(i), timestampMs: 1000 + UInt64(i), value: .float(Float(i))) }
        let payload = try decode(encoder.bytes)
        #expect(payload.metrics.map(\.alias) == Array(0..<20))
        #expect(payload.metrics.map(\.floatValue) == (0..<20).map(Float.init))
        let capacity = encoder.bytes.capacity
        encoder.reset()
        #expect(encoder.isEmpty && encoder.bytes.capacity == capacity)
    }

    @Test func theStampAddsThePublicationTimeAndSeqAndLeavesMetricTimestamps() throws {
        var encoder = SparkplugDataEncoder()
        encoder.append(alias: 7, timestampMs: 1_000, value: .double(1.5))
        var out: [UInt8] = []
        try SparkplugStamp.finish(body: encoder.bytes, timestampMs: 2_000, seq: 255, historical: false, into: &out)
        let payload = try decode(out)
        #expect(payload.timestamp == 2_000 && payload.seq == 255)
        #expect(payload.metrics.first?.timestamp == 1_000)
        #expect(payload.metrics.first?.hasIsHistorical == false)
    }

    @Test func aDeathIsStampedWithoutSeq() throws {
        var out: [UInt8] = []
        try SparkplugStamp.finish(
            body: SparkplugBirthEncoder.deviceDeath,
            timestampMs: 5,
            seq: nil,
            historical: false,
            into: &out
        )
        let payload = try decode(out)
        #expect(payload.timestamp == 5 && !payload.hasSeq && payload.metrics.isEmpty)
    }

    @Test func replayedDataHasEveryMetricHistoricalWithItsOwnTimestampAndValue() throws {
        var encoder = SparkplugDataEncoder()
        encoder.append(alias: 1, timestampMs: 10, value: .string("high"))
        encoder.append(alias: 2, timestampMs: 11, value: .float(-1))
        encoder.append(alias: 3, timestampMs: 12, value: .null)
        var live: [UInt8] = []
        try SparkplugStamp.finish(body: encoder.bytes, timestampMs: 99, seq: 4, historical: false, into: &live)
        var replayed: [UInt8] = []
        try SparkplugStamp.finish(body: encoder.bytes, timestampMs: 99, seq: 4, historical: true, into: &replayed)
        let before = try decode(live)
        let after = try decode(replayed)
        #expect(after.metrics.allSatisfy { $0.isHistorical })
        #expect(after.metrics.map(\.timestamp) == [10, 11, 12])
        var stripped = after
        for i in stripped.metrics.indices { stripped.metrics[i].clearIsHistorical() }
        #expect(stripped == before, "nothing but the flag changes")
        #expect(replayed.count == live.count + 3 * 2)
    }

    @Test(arguments: [[0x12, 0x05, 0x10], [0x12], [0x0F], [0x12, 0x80]] as [[UInt8]])
    func aMalformedStoredBodyIsRefusedNotReplayed(_ body: [UInt8]) {
        var out: [UInt8] = []
        #expect(throws: SparkplugError.self) {
            try SparkplugStamp.finish(body: body, timestampMs: 1, seq: 1, historical: true, into: &out)
        }
    }

    @Test func theSequenceStartsAtEveryNodeBirthAndWrapsAfter255() {
        var sequence = SparkplugSequence()
        #expect(sequence.next(for: .deviceData) == nil, "no data before the first birth")
        #expect(sequence.next(for: .nodeBirth) == 0)
        #expect(sequence.next(for: .deviceBirth) == 1)
        #expect(sequence.next(for: .nodeDeath) == nil)
        var seen: [UInt8] = []
        for _ in 0..<300 { seen.append(sequence.next(for: .deviceData)!) }
        #expect(seen[253] == 255 && seen[254] == 0 && seen[255] == 1)
        #expect(sequence.next(for: .nodeBirth) == 0, "a rebirth starts over")
    }
}
