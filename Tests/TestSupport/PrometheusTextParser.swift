/// A strict reader of the Prometheus text exposition format 0.0.4
/// (https://prometheus.io/docs/instrumenting/exposition_formats/), stricter than Prometheus itself where our
/// conventions are stricter: every family has `# HELP` and `# TYPE` before its first sample, a family's samples
/// are contiguous, series are unique, counters end in `_total` and are not negative, and no other comment or
/// blank line appears.
package struct PrometheusTextParser {
    package struct Sample: Equatable, Sendable {
        package var name: String
        package var labels: [String: String]
        package var value: Double
    }

    package struct Family: Equatable, Sendable {
        package var name: String
        package var type: String
        package var help: String
        package var samples: [Sample]
    }

    package struct Failure: Error, CustomStringConvertible {
        package var line: Int
        package var reason: String
        package var description: String { "line \(line): \(reason)" }
    }

    package static let types: Set<String> = ["counter", "gauge", "histogram", "summary", "untyped"]

    package static func parse(_ text: String) throws(Failure) -> [Family] {
        guard text.hasSuffix("\n") else { throw Failure(line: 0, reason: "the text does not end with a line feed") }
        var families: [Family] = []
        var pendingHelp: (name: String, help: String)?
        var seriesSeen = Set<String>()
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let line = String(raw)
            func fail(_ reason: String) -> Failure { Failure(line: number, reason: reason + ": \(line)") }
            if line.isEmpty { throw fail("blank line") }
            if line.hasPrefix("# HELP ") {
                let rest = line.dropFirst("# HELP ".count)
                guard let space = rest.firstIndex(of: " ") else { throw fail("HELP without text") }
                let name = String(rest[..<space])
                guard isMetricName(name) else { throw fail("invalid metric name \(name)") }
                guard !families.contains(where: { $0.name == name }), pendingHelp == nil else {
                    throw fail("HELP repeated or out of place")
                }
                pendingHelp = (name, String(rest[rest.index(after: space)...]))
                continue
            }
            if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst("# TYPE ".count).split(separator: " ", omittingEmptySubsequences: false)
                guard parts.count == 2 else { throw fail("TYPE needs a name and a type") }
                let name = String(parts[0])
                let type = String(parts[1])
                guard isMetricName(name) else { throw fail("invalid metric name \(name)") }
                guard types.contains(type) else { throw fail("unknown type \(type)") }
                guard let help = pendingHelp, help.name == name else {
                    throw fail("TYPE without a HELP for \(name) before it")
                }
                guard !families.contains(where: { $0.name == name }) else {
                    throw fail("family \(name) declared twice")
                }
                if type == "counter" && !name.hasSuffix("_total") {
                    throw fail("counter \(name) does not end in _total")
                }
                families.append(Family(name: name, type: type, help: help.help, samples: []))
                pendingHelp = nil
                continue
            }
            if line.hasPrefix("#") { throw fail("a comment other than HELP or TYPE") }
            guard pendingHelp == nil else { throw fail("sample between HELP and TYPE") }
            let sample = try parseSample(line, fail: fail)
            guard var family = families.last, family.name == sample.name else {
                throw fail("sample of \(sample.name) outside its family (HELP and TYPE first, samples contiguous)")
            }
            let series =
                sample.name + "{"
                + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "}"
            guard seriesSeen.insert(series).inserted else { throw fail("duplicate series \(series)") }
            if family.type == "counter" && !(sample.value >= 0) { throw fail("counter with a negative or NaN value") }
            family.samples.append(sample)
            families[families.count - 1] = family
        }
        if pendingHelp != nil { throw Failure(line: lines.count, reason: "HELP without TYPE at the end") }
        if let empty = families.first(where: { $0.samples.isEmpty }) {
            throw Failure(line: lines.count, reason: "family \(empty.name) has no samples")
        }
        return families
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`
    package static func isMetricName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first else { return false }
        let head = isLetter(first) || first == "_" || first == ":"
        return head
            && name.unicodeScalars.allSatisfy { isLetter($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == ":" }
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__` (reserved).
    package static func isLabelName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, isLetter(first) || first == "_", !name.hasPrefix("__") else {
            return false
        }
        return name.unicodeScalars.allSatisfy { isLetter($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    private static func isLetter(_ c: Unicode.Scalar) -> Bool { ("a"..."z").contains(c) || ("A"..."Z").contains(c) }

    /// `name[{label="value",…}] value [timestamp]`
    private static func parseSample(_ line: String, fail: (String) -> Failure) throws(Failure) -> Sample {
        let chars = Array(line.unicodeScalars)
        var i = 0
        var name = ""
        while i < chars.count, chars[i] != "{", chars[i] != " " {
            name.unicodeScalars.append(chars[i])
            i += 1
        }
        guard isMetricName(name) else { throw fail("invalid metric name \(name)") }
        var labels: [String: String] = [:]
        if i < chars.count, chars[i] == "{" {
            i += 1
            while true {
                guard i < chars.count else { throw fail("unterminated label set") }
                if chars[i] == "}" {
                    i += 1
                    break
                }
                var labelName = ""
                while i < chars.count, chars[i] != "=" {
                    labelName.unicodeScalars.append(chars[i])
                    i += 1
                }
                guard isLabelName(labelName) else { throw fail("invalid label name \(labelName)") }
                guard i + 1 < chars.count, chars[i] == "=", chars[i + 1] == "\"" else {
                    throw fail("label \(labelName) without =\"")
                }
                i += 2
                var value = ""
                while true {
                    guard i < chars.count else { throw fail("unterminated label value") }
                    let c = chars[i]
                    if c == "\"" { break }
                    if c == "\\" {
                        guard i + 1 < chars.count else { throw fail("dangling backslash") }
                        switch chars[i + 1] {
                        case "\\": value += "\\"
                        case "\"": value += "\""
                        case "n": value += "\n"
                        default: throw fail("invalid escape \\\(chars[i + 1])")
                        }
                        i += 2
                        continue
                    }
                    value.unicodeScalars.append(c)
                    i += 1
                }
                i += 1
                guard labels.updateValue(value, forKey: labelName) == nil else {
                    throw fail("label \(labelName) twice")
                }
                guard i < chars.count else { throw fail("unterminated label set") }
                if chars[i] == "," {
                    i += 1
                } else if chars[i] != "}" {
                    throw fail("expected , or } after a label")
                }
            }
        }
        guard i < chars.count, chars[i] == " " else { throw fail("no space before the value") }
        let rest = String(String.UnicodeScalarView(chars[(i + 1)...])).split(
            separator: " ",
            omittingEmptySubsequences: false
        )
        guard rest.count == 1 || rest.count == 2 else { throw fail("expected a value and an optional timestamp") }
        guard let value = parseValue(String(rest[0])) else { throw fail("invalid value \(rest[0])") }
        if rest.count == 2 && Int64(rest[1]) == nil { throw fail("invalid timestamp \(rest[1])") }
        return Sample(name: name, labels: labels, value: value)
    }

    /// Go's ParseFloat as Prometheus uses it: decimal or exponent form, `+Inf`, `-Inf`, `NaN`.
    static func parseValue(_ text: String) -> Double? {
        switch text {
        case "+Inf", "Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default: break
        }
        let allowed = Set("0123456789+-.eE")
        guard !text.isEmpty, text.allSatisfy(allowed.contains) else { return nil }
        return Double(text)
    }
}
