import AgentPorts
import MotionModel

/// A reusable byte buffer that writes JSON without allocating: its storage is reserved once and reused for
/// every message, so encoding a sample on the hot path costs no heap traffic.
///
/// Numbers are written in fixed-point with trailing zeros trimmed (`-0.981234`, `12`), never in exponent
/// form, which every JSON parser accepts. Non-finite numbers become `null` (JSON has no NaN).
public struct JSONBuffer: ~Copyable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 4096) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
    }

    @inline(__always)
    public mutating func byte(_ b: UInt8) {
        bytes.append(b)
    }

    /// Appends bytes as they are (already valid JSON).
    @inline(__always)
    public mutating func append(_ raw: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: raw)
    }

    /// Appends ASCII text known at compile time (keys, punctuation) without escaping.
    @inline(__always)
    public mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends a JSON string, escaped per RFC 8259; `escapingSlashes` writes `/` as `\/`, as Foundation's
    /// `JSONEncoder` does by default.
    public mutating func string(_ s: String, escapingSlashes: Bool = false) {
        bytes.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "/") where escapingSlashes: raw("\\/")
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0..<0x20:
                raw("\\u00")
                bytes.append(Self.hex[Int(b >> 4)])
                bytes.append(Self.hex[Int(b & 0xF)])
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    public mutating func integer(_ v: Int) {
        if v < 0 {
            byte(UInt8(ascii: "-"))
            // Int.min has no positive counterpart; its magnitude still fits a UInt64.
            unsigned(UInt64(bitPattern: Int64(v)).magnitudeOfNegative)
        } else {
            unsigned(UInt64(v))
        }
    }

    public mutating func unsigned(_ v: UInt64) {
        if v == 0 {
            byte(UInt8(ascii: "0"))
            return
        }
        // At most 20 decimal digits; written backwards into a fixed tuple, then copied.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var n = 0
        var value = v
        withUnsafeMutableBytes(of: &digits) { raw in
            while value > 0 {
                raw[n] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
                n += 1
            }
            var i = n - 1
            while i >= 0 {
                bytes.append(raw[i])
                i -= 1
            }
        }
    }

    public mutating func bool(_ v: Bool) {
        if v { raw("true") } else { raw("false") }
    }

    /// Appends `v` rounded to `decimals` places (0–9), trailing zeros trimmed; `null` when not finite or
    /// too large for fixed-point (|v| ≥ 9e9 at 9 decimals is outside any sensor's range).
    public mutating func number(_ v: Double, decimals: Int) {
        let scale = Self.powersOfTen[decimals]
        guard v.isFinite, abs(v) * scale < 9.2e18 else {
            raw("null")
            return
        }
        let scaled = (abs(v) * scale).rounded()
        if scaled == 0 {
            byte(UInt8(ascii: "0"))
            return
        }
        if v < 0 { byte(UInt8(ascii: "-")) }
        let factor = UInt64(scale)
        let fixed = UInt64(scaled)
        unsigned(fixed / factor)
        var fraction = fixed % factor
        guard fraction != 0 else { return }
        var places = decimals
        while fraction % 10 == 0 {
            fraction /= 10
            places -= 1
        }
        byte(UInt8(ascii: "."))
        // Leading zeros of the fraction: 0.05 at 3 places is fraction 5 with 2 places → "05".
        var width = 1
        var probe = fraction
        while probe >= 10 {
            probe /= 10
            width += 1
        }
        for _ in 0..<(places - width) { byte(UInt8(ascii: "0")) }
        unsigned(fraction)
    }

    private static let powersOfTen: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]

    /// `{"x":…,"y":…,"z":…}`
    public mutating func vector(_ v: Vector3, decimals: Int) {
        raw("{\"x\":")
        number(v.x, decimals: decimals)
        raw(",\"y\":")
        number(v.y, decimals: decimals)
        raw(",\"z\":")
        number(v.z, decimals: decimals)
        byte(UInt8(ascii: "}"))
    }

    /// Lends the encoded bytes without copying.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

extension UInt64 {
    /// The magnitude of a two's-complement negative value stored in `self`.
    fileprivate var magnitudeOfNegative: UInt64 { ~self &+ 1 }
}
