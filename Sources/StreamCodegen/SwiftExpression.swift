/// A Swift expression the generator lays out the way `swift format` does: on one line when it fits in 120 columns,
/// otherwise each argument (or element) on its own line, with a trailing comma after the last element of a
/// collection of several.
indirect enum SwiftExpression: Sendable {
    case atom(String)
    /// A string literal; one that does not fit is split at spaces into `"…" + "…"`, continued 4 spaces in.
    case string(String)
    /// `name(label: value, …)`; a nil label is an unlabelled argument.
    case call(String, [(label: String?, value: SwiftExpression)])
    case array([SwiftExpression])

    var oneLine: String {
        switch self {
        case .atom(let text):
            return text
        case .string(let text):
            return SwiftSource.literal(text)
        case .call(let name, let arguments):
            let inner = arguments.map { ($0.label.map { "\($0): " } ?? "") + $0.value.oneLine }
            return name + "(" + inner.joined(separator: ", ") + ")"
        case .array(let elements):
            return "[" + elements.map(\.oneLine).joined(separator: ", ") + "]"
        }
    }

    /// The expression's lines at `depth` (4 spaces each), after `prefix` and before `suffix`.
    func lines(depth: Int, prefix: String = "", suffix: String = "") -> [String] {
        let indent = String(repeating: "    ", count: depth)
        let single = indent + prefix + oneLine + suffix
        if single.count <= 120 { return [single] }
        switch self {
        case .atom:
            return [single]
        case .string(let text):
            return Self.split(text, first: indent + prefix, continuation: indent + "    + ", suffix: suffix)
        case .call(let name, let arguments):
            var out = [indent + prefix + name + "("]
            for (index, argument) in arguments.enumerated() {
                let last = index == arguments.count - 1
                out += argument.value.lines(
                    depth: depth + 1,
                    prefix: argument.label.map { "\($0): " } ?? "",
                    suffix: last ? "" : ","
                )
            }
            out.append(indent + ")" + suffix)
            return out
        case .array(let elements):
            var out = [indent + prefix + "["]
            for (index, element) in elements.enumerated() {
                let last = index == elements.count - 1
                out += element.lines(depth: depth + 1, suffix: last && elements.count == 1 ? "" : ",")
            }
            out.append(indent + "]" + suffix)
            return out
        }
    }

    /// `text` as string literals joined by `+`, each line within 120 columns where the words allow.
    static func split(_ text: String, first: String, continuation: String, suffix: String) -> [String] {
        var words: [String] = []
        var current = ""
        for character in text {
            current.append(character)
            if character == " " {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        var lines: [String] = []
        var chunk = ""
        var lead = first
        for word in words {
            let candidate = chunk + word
            // The last line also carries the suffix; an earlier one may be ended by it too, so reserve it.
            if !chunk.isEmpty && (lead + SwiftSource.literal(candidate) + suffix).count > 120 {
                lines.append(lead + SwiftSource.literal(chunk))
                lead = continuation
                chunk = word
            } else {
                chunk = candidate
            }
        }
        lines.append(lead + SwiftSource.literal(chunk) + suffix)
        return lines
    }

}

extension SwiftSource {
    /// `expression`'s lines at the current depth.
    mutating func expression(_ expression: SwiftExpression, prefix: String = "", suffix: String = "") {
        lines += expression.lines(depth: depth, prefix: prefix, suffix: suffix)
    }
}
