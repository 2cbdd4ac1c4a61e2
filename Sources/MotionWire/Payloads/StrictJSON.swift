/// The one parser of JSON that comes from the network: commands, signed envelopes and desired documents on the
/// agent, replies and retained documents in the operator tools. Strict RFC 8259 — one value, no comments, no
/// trailing commas, no leading zeros, no NaN, valid UTF-8, no unescaped control characters, no duplicate keys —
/// and bounded: bytes, nesting depth, members per object or array, string length and values in all, each checked
/// before the work it would cost, so no message can make the parser spend more than its limits allow (a 462-byte
/// YAML document with nested aliases once held the control door for 30 s: YAML never reads network input again).
///
/// Numbers keep their literal text (`Value.number`), so `100` and `100.0` reach the config schema as written and
/// nothing is rounded on the way.
public enum StrictJSON {
    /// What one document may hold.
    public struct Limits: Sendable, Equatable {
        public var maximumBytes: Int
        public var maximumDepth: Int
        /// Members of one object, or elements of one array.
        public var maximumMembers: Int
        /// Bytes of one string (keys included), after unescaping.
        public var maximumStringBytes: Int
        /// Values in the whole document (objects, arrays and scalars).
        public var maximumValues: Int

        public init(
            maximumBytes: Int,
            maximumDepth: Int,
            maximumMembers: Int,
            maximumStringBytes: Int,
            maximumValues: Int
        ) {
            self.maximumBytes = maximumBytes
            self.maximumDepth = maximumDepth
            self.maximumMembers = maximumMembers
            self.maximumStringBytes = maximumStringBytes
            self.maximumValues = maximumValues
        }

        /// A command or a signed envelope: a flat object of a few arguments (`control.max_payload_bytes` bounds
        /// the bytes further).
        public static let command = Limits(
            maximumBytes: 64 << 10,
            maximumDepth: 4,
            maximumMembers: 32,
            maximumStringBytes: 64 << 10,
            maximumValues: 128
        )
        /// A desired document: `{"version", "streams": {<8 streams>: {<≤ 10 keys>}}, "metrics": {…}}`.
        public static let desiredDocument = Limits(
            maximumBytes: 64 << 10,
            maximumDepth: 6,
            maximumMembers: 64,
            maximumStringBytes: 4 << 10,
            maximumValues: 512
        )
        /// What operator tools read back from devices: a status document or a reply.
        public static let document = Limits(
            maximumBytes: 1 << 20,
            maximumDepth: 16,
            maximumMembers: 4096,
            maximumStringBytes: 64 << 10,
            maximumValues: 65_536
        )
    }

    /// A parsed value. Objects keep their members in document order.
    public indirect enum Value: Sendable, Equatable {
        case null
        case bool(Bool)
        /// The number as written (`-12.5e3`): valid JSON number syntax, not yet converted.
        case number(String)
        case string(String)
        case array([Value])
        case object([(key: String, value: Value)])

        public static func == (a: Value, b: Value) -> Bool {
            switch (a, b) {
            case (.null, .null): true
            case (.bool(let x), .bool(let y)): x == y
            case (.number(let x), .number(let y)): x == y
            case (.string(let x), .string(let y)): x == y
            case (.array(let x), .array(let y)): x == y
            case (.object(let x), .object(let y)):
                x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
            default: false
            }
        }

        /// The member `key` of an object; nil for a missing key or a value that is not an object.
        public subscript(key: String) -> Value? {
            guard case .object(let members) = self else { return nil }
            return members.first { $0.key == key }?.value
        }

        public var string: String? {
            if case .string(let s) = self { return s }
            return nil
        }

        /// A number as a `Double`, when it is finite in that form.
        public var double: Double? {
            guard case .number(let text) = self, let value = Double(text), value.isFinite else { return nil }
            return value
        }

        /// A number that is a whole number (`12`, not `12.0` or `1.2e1`) fitting in `Int`.
        public var integer: Int? {
            guard case .number(let text) = self else { return nil }
            return Int(text)
        }

        public var isObject: Bool {
            if case .object = self { return true }
            return false
        }
    }

    /// Why a document was refused: what, and at which byte.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var offset: Int
        public var description: String { "\(reason) (at byte \(offset))" }
    }

    public static func parse(_ bytes: [UInt8], limits: Limits) throws(Failure) -> Value {
        guard bytes.count <= limits.maximumBytes else {
            throw Failure(reason: "is \(bytes.count) bytes, more than the \(limits.maximumBytes) accepted", offset: 0)
        }
        var parser = Parser(bytes: bytes, limits: limits)
        parser.skipSpace()
        let value = try parser.value(depth: 1)
        parser.skipSpace()
        guard parser.position == bytes.count else {
            throw Failure(reason: "has more after the JSON value", offset: parser.position)
        }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        let limits: Limits
        var position = 0
        var values = 0

        init(bytes: [UInt8], limits: Limits) {
            self.bytes = bytes
            self.limits = limits
        }

        func fail(_ reason: String) -> Failure { Failure(reason: reason, offset: position) }

        var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipSpace() {
            while let c = current, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { position += 1 }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(Failure) {
            guard current == byte else { throw fail("expected \(what)") }
            position += 1
        }

        mutating func value(depth: Int) throws(Failure) -> Value {
            values += 1
            guard values <= limits.maximumValues else {
                throw fail("holds more than \(limits.maximumValues) values")
            }
            guard let c = current else { throw fail("ends where a value was expected") }
            switch c {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw fail("has an unexpected character where a value was expected")
            }
        }

        mutating func literal(_ word: String, _ value: Value) throws(Failure) -> Value {
            for byte in word.utf8 {
                guard current == byte else { throw fail("has an unknown word (only true, false and null are JSON)") }
                position += 1
            }
            return value
        }

        mutating func nest(_ depth: Int) throws(Failure) {
            guard depth <= limits.maximumDepth else { throw fail("nests deeper than \(limits.maximumDepth) levels") }
        }

        mutating func object(depth: Int) throws(Failure) -> Value {
            try nest(depth)
            position += 1
            var members: [(key: String, value: Value)] = []
            var keys = Set<String>()
            skipSpace()
            if current == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else { throw fail("expected a key in quotes") }
                let keyStart = position
                let key = try string()
                guard keys.insert(key).inserted else {
                    position = keyStart
                    throw fail("repeats the key \"\(Self.printable(key))\"")
                }
                guard members.count < limits.maximumMembers else {
                    throw fail("has more than \(limits.maximumMembers) members in one object")
                }
                skipSpace()
                try expect(UInt8(ascii: ":"), "':' after a key")
                skipSpace()
                members.append((key, try value(depth: depth + 1)))
                skipSpace()
                if current == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                try expect(UInt8(ascii: "}"), "',' or '}'")
                return .object(members)
            }
        }

        mutating func array(depth: Int) throws(Failure) -> Value {
            try nest(depth)
            position += 1
            var elements: [Value] = []
            skipSpace()
            if current == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            }
            while true {
                skipSpace()
                guard elements.count < limits.maximumMembers else {
                    throw fail("has more than \(limits.maximumMembers) elements in one array")
                }
                elements.append(try value(depth: depth + 1))
                skipSpace()
                if current == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                try expect(UInt8(ascii: "]"), "',' or ']'")
                return .array(elements)
            }
        }

        /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        mutating func number() throws(Failure) -> String {
            let start = position
            if current == UInt8(ascii: "-") { position += 1 }
            guard let first = current, isDigit(first) else { throw fail("has a malformed number") }
            position += 1
            if first == UInt8(ascii: "0"), let next = current, isDigit(next) {
                throw fail("has a number with a leading zero")
            }
            while let c = current, isDigit(c) { position += 1 }
            if current == UInt8(ascii: ".") {
                position += 1
                guard let c = current, isDigit(c) else { throw fail("has a malformed number") }
                while let c = current, isDigit(c) { position += 1 }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                position += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
                guard let c = current, isDigit(c) else { throw fail("has a malformed number") }
                while let c = current, isDigit(c) { position += 1 }
            }
            guard position - start <= 64 else { throw fail("has a number longer than 64 characters") }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

        mutating func string() throws(Failure) -> String {
            position += 1
            var out: [UInt8] = []
            while true {
                guard let c = current else { throw fail("ends inside a string") }
                guard out.count <= limits.maximumStringBytes else {
                    throw fail("has a string longer than \(limits.maximumStringBytes) bytes")
                }
                switch c {
                case UInt8(ascii: "\""):
                    position += 1
                    guard out.count <= limits.maximumStringBytes else {
                        throw fail("has a string longer than \(limits.maximumStringBytes) bytes")
                    }
                    // The bytes are checked UTF-8 here (escapes produce valid scalars), so this is lossless.
                    return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    position += 1
                    try escape(into: &out)
                case 0..<0x20:
                    throw fail("has a control character in a string (write it as \\u00XX)")
                case 0x80...:
                    try utf8Sequence(into: &out)
                default:
                    out.append(c)
                    position += 1
                }
            }
        }

        mutating func escape(into out: inout [UInt8]) throws(Failure) {
            guard let c = current else { throw fail("ends inside an escape") }
            position += 1
            switch c {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard current == UInt8(ascii: "\\") else { throw fail("has a lone UTF-16 surrogate") }
                    position += 1
                    guard current == UInt8(ascii: "u") else { throw fail("has a lone UTF-16 surrogate") }
                    position += 1
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("has a lone UTF-16 surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("has a lone UTF-16 surrogate")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw fail("has an invalid \\u escape") }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default:
                throw fail("has an unknown escape \\\(Character(Unicode.Scalar(c)))")
            }
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let c = current else { throw fail("ends inside a \\u escape") }
                let digit: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
                default: throw fail("has a malformed \\u escape")
                }
                value = value << 4 | digit
                position += 1
            }
            return value
        }

        /// One well-formed UTF-8 sequence (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
        mutating func utf8Sequence(into out: inout [UInt8]) throws(Failure) {
            let lead = bytes[position]
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                high = 0x9F
            case 0xF0:
                length = 4
                low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                high = 0x8F
            default: throw fail("is not valid UTF-8")
            }
            guard position + length <= bytes.count else { throw fail("is not valid UTF-8") }
            let second = bytes[position + 1]
            guard second >= low && second <= high else { throw fail("is not valid UTF-8") }
            for i in 2..<length where bytes[position + i] & 0xC0 != 0x80 { throw fail("is not valid UTF-8") }
            out.append(contentsOf: bytes[position..<(position + length)])
            position += length
        }

        /// A key as it may appear in an error: control characters replaced, at most 64 characters.
        static func printable(_ text: String) -> String { Printable.text(text, limit: 64) }
    }
}

/// Text from the network made safe for a log line or a terminal: control characters (escape sequences among
/// them) written as `\u{1B}`, and cut to `limit` characters with an ellipsis.
public enum Printable {
    /// JSON text (as JSONEncoder writes it) with every character a terminal would act on that JSON leaves raw —
    /// DEL, C1 (CSI U+009B among them), line and paragraph separators, bidirectional overrides — written as
    /// a `\u` escape of four hex digits (`\u009b`): the same JSON value, safe to print. (The encoder escapes C0
    /// itself; these can stand only in strings, so escaping them changes no value.)
    public static func json(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if isActedOn(scalar.value) {
                out += String(format: "\\u%04x", scalar.value)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func isActedOn(_ value: UInt32) -> Bool {
        (0x7F...0x9F).contains(value) || (0x2028...0x202E).contains(value) || (0x2066...0x2069).contains(value)
    }

    public static func text(_ text: String, limit: Int = 128) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                out += "…"
                break
            }
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || (0x2028...0x2029).contains(scalar.value)
                || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
            {
                out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return out
    }
}

extension StrictJSON.Value {
    /// The value as compact JSON text, members in their order: what operators' tools sign, so the bytes a device
    /// verifies are exactly these.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .number(let literal): out += Array(literal.utf8)
        case .string(let text): Self.write(string: text, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                element.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.write(string: member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func write(string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += Array("\\\"".utf8)
            case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0..<0x20:
                let hex = String(byte, radix: 16)
                out += Array(("\\u00" + (hex.count == 1 ? "0" : "") + hex).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
