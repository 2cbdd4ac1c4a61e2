/// Finishes a message body at publication: appends the payload `timestamp` (field 1, when it was published) and
/// `seq` (field 3), and for data replayed after an outage marks every metric `is_historical` (6.4.4: store and
/// forward, "should not update the real time tag"), keeping each metric's own timestamp — when it was measured.
/// Protobuf readers accept fields in any order and let the last occurrence of a scalar win, so appending is
/// enough. Writes into `out` (cleared first), which allocates only when its capacity is too small.
package enum SparkplugStamp {
    package static func finish(
        body: UnsafeRawBufferPointer,
        timestampMs: UInt64,
        seq: UInt8?,
        historical: Bool,
        into out: inout [UInt8]
    ) throws(SparkplugError) {
        out.removeAll(keepingCapacity: true)
        if historical {
            try markHistorical(body, into: &out)
        } else {
            out.append(contentsOf: body)
        }
        out.append(ProtobufWire.key(1, .varint))
        ProtobufWire.appendVarint(timestampMs, to: &out)
        if let seq {
            out.append(ProtobufWire.key(3, .varint))
            ProtobufWire.appendVarint(UInt64(seq), to: &out)
        }
    }

    package static func finish(
        body: [UInt8],
        timestampMs: UInt64,
        seq: UInt8?,
        historical: Bool,
        into out: inout [UInt8]
    ) throws(SparkplugError) {
        let result: Result<Void, SparkplugError> = body.withUnsafeBytes { raw in
            do throws(SparkplugError) {
                try finish(body: raw, timestampMs: timestampMs, seq: seq, historical: historical, into: &out)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// The `seq` (field 3) a finished message carries — the last occurrence, as protobuf readers take it; nil
    /// when it has none (an NDEATH) or is not a protobuf payload. For readers that need only that field.
    package static func seq(of payload: [UInt8]) -> UInt64? {
        payload.withUnsafeBytes { body -> UInt64? in
            var offset = 0
            var seq: UInt64?
            while offset < body.count {
                guard let key = ProtobufWire.readVarint(body, &offset) else { return nil }
                switch key & 7 {
                case 0:
                    guard let value = ProtobufWire.readVarint(body, &offset) else { return nil }
                    if key >> 3 == 3 { seq = value }
                case 1: offset += 8
                case 5: offset += 4
                case 2:
                    guard let length = ProtobufWire.readVarint(body, &offset), length <= UInt64(body.count - offset)
                    else { return nil }
                    offset += Int(length)
                default: return nil
                }
            }
            return offset == body.count ? seq : nil
        }
    }

    /// Copies the payload fields, growing each metric (field 2) by `is_historical = true` at its end.
    private static func markHistorical(_ body: UnsafeRawBufferPointer, into out: inout [UInt8]) throws(SparkplugError) {
        var offset = 0
        while offset < body.count {
            let fieldStart = offset
            guard let key = ProtobufWire.readVarint(body, &offset) else { throw malformed(fieldStart) }
            let field = key >> 3
            switch key & 7 {
            case 0:
                guard ProtobufWire.readVarint(body, &offset) != nil else { throw malformed(fieldStart) }
            case 1:
                offset += 8
            case 5:
                offset += 4
            case 2:
                guard let length = ProtobufWire.readVarint(body, &offset), length <= UInt64(body.count - offset)
                else { throw malformed(fieldStart) }
                if field == 2 {
                    out.append(ProtobufWire.key(2, .lengthDelimited))
                    ProtobufWire.appendVarint(length + 2, to: &out)
                    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: body[offset..<offset + Int(length)]))
                    out.append(ProtobufWire.key(5, .varint))
                    out.append(1)
                    offset += Int(length)
                    continue
                }
                offset += Int(length)
            default:
                throw malformed(fieldStart)
            }
            guard offset <= body.count else { throw malformed(fieldStart) }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: body[fieldStart..<offset]))
        }
    }

    private static func malformed(_ offset: Int) -> SparkplugError {
        SparkplugError(
            .malformedPayload,
            "a stored Sparkplug message body is not a protobuf payload (bad field at byte \(offset)): the message "
                + "is dropped, not replayed"
        )
    }
}
