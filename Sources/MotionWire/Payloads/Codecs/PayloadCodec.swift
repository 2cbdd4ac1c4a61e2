import Foundation
import MotionModel

/// One payload's wire form (docs/payloads.md): the JSON fields it writes after the envelope, how they read
/// back, and one line for a person. Each codec is generated from its payload's declaration
/// (Sources/StreamDeclarations, scripts/codegen/streams/generate.sh); `StreamPayload` hands each case to its
/// codec, and `PayloadEncoder` and `PayloadDecoder` stay as they are.
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

    /// `x=+0.0120 y=-0.0030 z=-0.9990`, for summaries.
    static func triple(_ v: Vector3) -> String {
        String(format: "x=%+.4f y=%+.4f z=%+.4f", v.x, v.y, v.z)
    }
}
