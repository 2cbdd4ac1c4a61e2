import AgentPorts
import Foundation
import MotionModel

/// Reads every stream payload back (docs/payloads.md): a single JSON message, a JSON batch
/// `{"batch":[message, …]}` or a binary batch. Strict: a missing or mistyped field is an error naming it. Off the
/// hot path (subscribers, `sub`, `watch`, the benchmark, tests), so it may allocate.
public enum PayloadDecoder {
    /// The samples of one message on a topic of `kind`, in order.
    public static func decode(_ bytes: [UInt8], kind: PayloadKind) throws(WireDecodingError) -> [WireMessage] {
        if BinaryBatchReader.isBinary(bytes) {
            guard let binary = kind.binaryKind else {
                throw WireDecodingError("a binary payload on \(kind.subject.path), which is only ever JSON")
            }
            return try BinaryBatchReader.decode(bytes, kind: binary)
        }
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(bytes)
        } catch {
            throw WireDecodingError("not JSON: \(error)")
        }
        guard case .object(let object) = parsed else { throw WireDecodingError("not a JSON object") }
        if let batch = object["batch"] {
            guard case .array(let items) = batch else { throw WireDecodingError("`batch` is not an array") }
            var messages: [WireMessage] = []
            for (i, item) in items.enumerated() {
                guard case .object(let sample) = item else { throw WireDecodingError("batch[\(i)] is not an object") }
                do {
                    messages.append(try message(PayloadFields(sample), kind: kind))
                } catch {
                    throw WireDecodingError("batch[\(i)]: \(error.description)")
                }
            }
            return messages
        }
        return [try message(PayloadFields(object), kind: kind)]
    }

    private static func message(_ o: PayloadFields, kind: PayloadKind) throws(WireDecodingError) -> WireMessage {
        let timestamp = try o.number("timestamp")
        let envelope = MessageEnvelope(
            seq: try o.unsigned("seq"),
            timestamp: timestamp,
            time: try o.number("time"),
            clockSynchronized: try o.optionalBool("clockSynchronized") ?? true
        )
        let payload = try StreamPayload.read(kind, o, timestamp: timestamp)
        return WireMessage(envelope: envelope, payload: payload)
    }
}
