/// JSON with its members in the order given, printed with 2-space indentation, an object or array on one line
/// when it fits in 120 columns (as docs/schemas has always been written).
indirect enum JSONText: Sendable {
    case object([(String, JSONText)])
    case array([JSONText])
    case string(String)
    case number(Double)
    case bool(Bool)
    /// JSON text used as it is (a rule a declaration spells out).
    case raw(String)

    var inline: String {
        switch self {
        case .object(let members):
            if members.isEmpty { return "{}" }
            return "{" + members.map { Self.quote($0.0) + ": " + $0.1.inline }.joined(separator: ", ") + "}"
        case .array(let elements):
            return "[" + elements.map(\.inline).joined(separator: ", ") + "]"
        case .string(let text): return Self.quote(text)
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
            return String(value)
        case .bool(let value): return value ? "true" : "false"
        case .raw(let text): return text
        }
    }

    /// The document, ending with a newline.
    var document: String { lines(indent: 0, prefix: "", suffix: "").joined(separator: "\n") + "\n" }

    func lines(indent: Int, prefix: String, suffix: String) -> [String] {
        let pad = String(repeating: "  ", count: indent)
        let single = pad + prefix + inline + suffix
        // The document's root is never on one line; nested values are when they fit.
        if single.count <= 120 && indent > 0 { return [single] }
        switch self {
        case .object(let members) where !members.isEmpty:
            var out = [pad + prefix + "{"]
            for (index, (key, value)) in members.enumerated() {
                out += value.lines(
                    indent: indent + 1,
                    prefix: Self.quote(key) + ": ",
                    suffix: index == members.count - 1 ? "" : ","
                )
            }
            return out + [pad + "}" + suffix]
        case .array(let elements) where !elements.isEmpty:
            var out = [pad + prefix + "["]
            for (index, element) in elements.enumerated() {
                out += element.lines(indent: indent + 1, prefix: "", suffix: index == elements.count - 1 ? "" : ",")
            }
            return out + [pad + "]" + suffix]
        default:
            return [single]
        }
    }

    static func quote(_ text: String) -> String {
        var s = "\""
        for c in text.unicodeScalars {
            switch c {
            case "\"": s += "\\\""
            case "\\": s += "\\\\"
            case "\n": s += "\\n"
            case "\t": s += "\\t"
            default: s.unicodeScalars.append(c)
            }
        }
        return s + "\""
    }
}
