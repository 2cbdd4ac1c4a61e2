/// The protobuf wire format, as far as the hand-written encoders need it (protobuf.dev, "Encoding"): base-128
/// varints, little-endian fixed32/fixed64, and field keys `(number << 3) | wire type`. Everything appends to a
/// caller's `[UInt8]`, which allocates only when its reserved capacity runs out.
enum ProtobufWire {
    enum WireType: UInt8 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
        case fixed32 = 5
    }

    @inline(__always)
    static func key(_ field: UInt8, _ type: WireType) -> UInt8 { field << 3 | type.rawValue }

    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        // 7 bits per byte: 1 byte up to 127, 10 bytes for the top bit.
        value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    @inline(__always)
    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    @inline(__always)
    static func appendFixed32(_ bits: UInt32, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: bits))
        bytes.append(UInt8(truncatingIfNeeded: bits >> 8))
        bytes.append(UInt8(truncatingIfNeeded: bits >> 16))
        bytes.append(UInt8(truncatingIfNeeded: bits >> 24))
    }

    @inline(__always)
    static func appendFixed64(_ bits: UInt64, to bytes: inout [UInt8]) {
        appendFixed32(UInt32(truncatingIfNeeded: bits), to: &bytes)
        appendFixed32(UInt32(truncatingIfNeeded: bits >> 32), to: &bytes)
    }

    /// Reads a varint at `offset`, advancing it; nil when the bytes end first or it runs past 10 bytes.
    static func readVarint(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count, shift < 64 {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }
}
