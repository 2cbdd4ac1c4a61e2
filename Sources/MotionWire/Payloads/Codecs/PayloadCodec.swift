import Foundation

/// One payload's wire form (docs/payloads.md): the JSON fields it writes after the envelope, how they read
/// back, and one line for a person. `StreamPayload` hands each case to its codec, so a new payload is one codec
/// file and one case there; `PayloadEncoder` and `PayloadDecoder` stay as they are.
protocol PayloadCodec {
    associatedtype Value

    /// Writes the payload's fields, each after a comma, into the message the envelope opened. Allocation-free:
    /// the hot path encodes every sample through it.
    static func write(_ value: Value, into b: inout JSONBuffer)

    /// Reads the fields back; `timestamp` is the envelope's (the values that carry their own take it).
    static func read(_ fields: PayloadFields, timestamp: Double) throws(WireDecodingError) -> Value

    /// One line for a terminal (`watch`).
    static func summary(_ value: Value) -> String
}

extension PayloadCodec {
    static func optional(_ v: Double?, decimals: Int, _ b: inout JSONBuffer) {
        if let v { b.number(v, decimals: decimals) } else { b.raw("null") }
    }

    static func optional(_ v: Int?, _ b: inout JSONBuffer) {
        if let v { b.integer(v) } else { b.raw("null") }
    }
}
