import MotionModel

/// Writes every stream payload as JSON (docs/payloads.md) into a reusable `JSONBuffer`: no allocation, numbers
/// at the precision each field documents. The envelope's fields, then the payload's (its codec, `Codecs/`).
public enum PayloadEncoder {
    /// The whole message: envelope, payload, closing brace.
    public static func encode(_ envelope: MessageEnvelope, _ payload: StreamPayload, into b: inout JSONBuffer) {
        envelope.open(into: &b)
        payload.writeFields(into: &b)
        b.byte(UInt8(ascii: "}"))
    }
}
