/// Writes the metrics of an NDATA or DDATA payload (6.4.4: alias, per-metric timestamp, value — never the name)
/// by hand into a reused buffer: no allocation per sample once the buffer's capacity fits a message, which
/// swift-protobuf's message types cannot promise (every `Metric` is a class-backed struct, every payload an
/// array of them). The body carries neither the payload's `timestamp` nor `seq`: those belong to the moment of
/// publication, and `SparkplugStamp` appends them then (protobuf fields may come in any order).
///
/// Births, deaths and commands are rare and go through swift-protobuf (`SparkplugBirthEncoder`); tests decode
/// this encoder's output with swift-protobuf and with an independent Python host to keep the two in step.
package struct SparkplugDataEncoder: Sendable {
    /// The metrics written since the last `reset()`, as payload field 2 entries.
    package private(set) var bytes: [UInt8]

    package init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    package var isEmpty: Bool { bytes.isEmpty }

    package mutating func reset() { bytes.removeAll(keepingCapacity: true) }

    /// Appends one metric: `metrics { alias, timestamp, value }`, or `is_null` for `.null`.
    package mutating func append(alias: UInt64, timestampMs: UInt64, value: SparkplugMetricValue) {
        let size =
            1 + ProtobufWire.varintSize(alias) + 1 + ProtobufWire.varintSize(timestampMs) + Self.valueSize(value)
        bytes.append(ProtobufWire.key(2, .lengthDelimited))
        ProtobufWire.appendVarint(UInt64(size), to: &bytes)
        bytes.append(ProtobufWire.key(2, .varint))
        ProtobufWire.appendVarint(alias, to: &bytes)
        bytes.append(ProtobufWire.key(3, .varint))
        ProtobufWire.appendVarint(timestampMs, to: &bytes)
        Self.appendValue(value, to: &bytes)
    }

    @inline(__always)
    static func valueSize(_ value: SparkplugMetricValue) -> Int {
        switch value {
        case .boolean: 2
        case .int32(let v): 1 + ProtobufWire.varintSize(UInt64(UInt32(bitPattern: v)))
        case .uint32(let v): 1 + ProtobufWire.varintSize(UInt64(v))
        case .int64(let v): 1 + ProtobufWire.varintSize(UInt64(bitPattern: v))
        case .uint64(let v), .dateTime(let v): 1 + ProtobufWire.varintSize(v)
        case .float: 5
        case .double: 9
        case .string(let s):
            1 + ProtobufWire.varintSize(UInt64(s.utf8.count)) + s.utf8.count
        case .null: 2
        }
    }

    @inline(__always)
    static func appendValue(_ value: SparkplugMetricValue, to bytes: inout [UInt8]) {
        switch value {
        case .boolean(let v):
            bytes.append(ProtobufWire.key(14, .varint))
            bytes.append(v ? 1 : 0)
        case .int32(let v):
            bytes.append(ProtobufWire.key(10, .varint))
            ProtobufWire.appendVarint(UInt64(UInt32(bitPattern: v)), to: &bytes)
        case .uint32(let v):
            bytes.append(ProtobufWire.key(10, .varint))
            ProtobufWire.appendVarint(UInt64(v), to: &bytes)
        case .int64(let v):
            bytes.append(ProtobufWire.key(11, .varint))
            ProtobufWire.appendVarint(UInt64(bitPattern: v), to: &bytes)
        case .uint64(let v), .dateTime(let v):
            bytes.append(ProtobufWire.key(11, .varint))
            ProtobufWire.appendVarint(v, to: &bytes)
        case .float(let v):
            bytes.append(ProtobufWire.key(12, .fixed32))
            ProtobufWire.appendFixed32(v.bitPattern, to: &bytes)
        case .double(let v):
            bytes.append(ProtobufWire.key(13, .fixed64))
            ProtobufWire.appendFixed64(v.bitPattern, to: &bytes)
        case .string(let s):
            bytes.append(ProtobufWire.key(15, .lengthDelimited))
            ProtobufWire.appendVarint(UInt64(s.utf8.count), to: &bytes)
            bytes.append(contentsOf: s.utf8)
        case .null:
            bytes.append(ProtobufWire.key(7, .varint))
            bytes.append(1)
        }
    }
}
