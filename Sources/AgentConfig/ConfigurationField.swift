import Foundation

/// What is wrong with one value, before the decoder adds where it was written.
struct FieldProblem: Error, Equatable {
    var kind: ConfigurationError.Kind
    var problem: String
    var suggestion: String? = nil

    static func wrongType(_ expected: String) -> FieldProblem {
        FieldProblem(kind: .wrongType, problem: "is not \(expected)")
    }

    static let outOfRange = FieldProblem(kind: .outOfRange, problem: "is out of range")

    /// A word that is not among `names`, with the closest of them as the suggestion.
    static func notAChoice(_ text: String, among names: [String]) -> FieldProblem {
        FieldProblem(
            kind: .invalidValue,
            problem: "is not one of the choices",
            suggestion: EditDistance.closest(to: text, among: names)
        )
    }
}

/// A scalar as it is written back by `effectiveYAML()`.
enum RenderedScalar: Equatable {
    /// Text, always double-quoted so `"null"`, `"123"` or `"yes"` stay text.
    case text(String)
    /// A number or a boolean, written plain.
    case plain(String)
    /// No value: the option keeps its documented default meaning (`nil`).
    case null
}

/// How a value is read: where relative paths start.
struct FieldContext {
    /// The directory of the configuration file; relative paths in the file are relative to it, like
    /// Prometheus' `*_file` options, so a config and its secrets can move together. `nil` keeps paths as
    /// written (relative to the working directory).
    var baseDirectory: String?
}

/// What is wrong with one element of a list, by its 0-based index.
struct ElementProblem: Equatable {
    var index: Int
    var problem: FieldProblem
}

/// One leaf of config.yaml: what it accepts (in words, for errors), how to read and check a value written
/// as text (or a list of them), and how to write the current value back. Builders below cover every value
/// type the schema uses.
struct ConfigurationField {
    /// Reads one value written as text into the configuration; returns the problem instead, if any.
    typealias ScalarDecoder = (_ text: String, _ context: FieldContext, _ configuration: inout AgentConfiguration)
        -> FieldProblem?
    /// Reads a list's elements into the configuration; returns one problem per refused element and leaves
    /// the setting unchanged when there is any.
    typealias ListDecoder = (_ elements: [String], _ configuration: inout AgentConfiguration) -> [ElementProblem]

    enum Value {
        /// One value, written as text.
        case scalar(decode: ScalarDecoder, render: (_ configuration: AgentConfiguration) -> RenderedScalar)
        /// A YAML list of values written as text; a list in the file replaces the default list as a whole.
        case list(decode: ListDecoder, render: (_ configuration: AgentConfiguration) -> [RenderedScalar])
    }

    let allowed: String
    let value: Value
    /// For a list: how an element written as a section (`{host: broker-b, port: 8883}`) is read — its keys,
    /// and the text it stands for; nil when elements are single values only.
    var elementSection: ElementSection?

    struct ElementSection {
        let keys: [String]
        /// The element's text from its values by key, or why they make none.
        let text: (_ values: [String: String]) -> Result<String, FieldProblem>
    }

    init(allowed: String, value: Value) {
        self.allowed = allowed
        self.value = value
    }

    /// A single-valued field.
    init(
        allowed: String,
        decode: @escaping ScalarDecoder,
        render: @escaping (_ configuration: AgentConfiguration) -> RenderedScalar
    ) {
        self.init(allowed: allowed, value: .scalar(decode: decode, render: render))
    }
}

extension ConfigurationField {
    /// Free text, checked by `check` (which returns the problem, if any).
    static func text(
        _ keyPath: WritableKeyPath<AgentConfiguration, String>,
        allowed: String,
        check: @escaping (String) -> FieldProblem? = { _ in nil }
    ) -> ConfigurationField {
        ConfigurationField(
            allowed: allowed,
            decode: { text, _, configuration in
                if let problem = check(text) { return problem }
                configuration[keyPath: keyPath] = text
                return nil
            },
            render: { .text($0[keyPath: keyPath]) }
        )
    }

    /// Optional free text (an empty value in the file means `nil`, the default).
    static func optionalText(
        _ keyPath: WritableKeyPath<AgentConfiguration, String?>,
        allowed: String
    ) -> ConfigurationField {
        ConfigurationField(
            allowed: allowed,
            decode: { text, _, configuration in
                configuration[keyPath: keyPath] = text
                return nil
            },
            render: { $0[keyPath: keyPath].map(RenderedScalar.text) ?? .null }
        )
    }

    /// An optional file or directory path. Whether the file is readable is checked after all values are
    /// read (the environment may replace it), see `ConfigurationDecoder.checkFiles()`.
    static func path(
        _ keyPath: WritableKeyPath<AgentConfiguration, String?>,
        allowed: String
    ) -> ConfigurationField {
        ConfigurationField(
            allowed: allowed,
            decode: { text, context, configuration in
                if text.isEmpty {
                    return FieldProblem(
                        kind: .invalidValue,
                        problem: "is an empty path (leave the value out, without quotes, for none)"
                    )
                }
                if text.utf8.contains(0) { return FieldProblem(kind: .invalidValue, problem: "contains a NUL byte") }
                configuration[keyPath: keyPath] = resolve(path: text, against: context.baseDirectory)
                return nil
            },
            render: { $0[keyPath: keyPath].map(RenderedScalar.text) ?? .null }
        )
    }

    /// A whole number within `range`.
    static func integer(
        _ keyPath: WritableKeyPath<AgentConfiguration, Int>,
        range: ClosedRange<Int>,
        unit: String? = nil
    ) -> ConfigurationField {
        let unitText = unit.map { " (\($0))" } ?? ""
        return ConfigurationField(
            allowed: "a whole number \(range.lowerBound)–\(range.upperBound)\(unitText)",
            decode: { text, _, configuration in
                guard let value = parseInteger(text) else { return notAnInteger(text) }
                guard range.contains(value) else { return .outOfRange }
                configuration[keyPath: keyPath] = value
                return nil
            },
            render: { .plain(String($0[keyPath: keyPath])) }
        )
    }

    /// An optional whole number within `range`; left empty it stays `nil` (`none` says what that means).
    static func optionalInteger(
        _ keyPath: WritableKeyPath<AgentConfiguration, Int?>,
        range: ClosedRange<Int>,
        unit: String,
        none: String
    ) -> ConfigurationField {
        ConfigurationField(
            allowed: "a whole number \(range.lowerBound)–\(range.upperBound) (\(unit)); leave empty for \(none)",
            decode: { text, _, configuration in
                guard let value = parseInteger(text) else { return notAnInteger(text) }
                guard range.contains(value) else { return .outOfRange }
                configuration[keyPath: keyPath] = value
                return nil
            },
            render: { $0[keyPath: keyPath].map { .plain(String($0)) } ?? .null }
        )
    }

    /// Why text that is not a whole number in range is refused: a whole number too large for the type is a
    /// range problem (99999999999999999999), a fraction or a word a type problem.
    private static func notAnInteger(_ text: String) -> FieldProblem {
        guard let number = parseNumber(text) else { return .wrongType("a number") }
        return number == number.rounded() ? .outOfRange : .wrongType("a whole number")
    }

    /// A whole number 0–2⁶⁴−1.
    static func unsigned(_ keyPath: WritableKeyPath<AgentConfiguration, UInt64>) -> ConfigurationField {
        ConfigurationField(
            allowed: "a whole number 0–\(UInt64.max)",
            decode: { text, _, configuration in
                guard let value = UInt64(text.replacingOccurrences(of: "_", with: "")) else {
                    if let signed = parseInteger(text), signed < 0 { return .outOfRange }
                    return notAnInteger(text)
                }
                configuration[keyPath: keyPath] = value
                return nil
            },
            render: { .plain(String($0[keyPath: keyPath])) }
        )
    }

    /// Reads a finite number that `accepts` takes and hands it to `store`.
    private static func numberDecoder(
        accepts: @escaping (Double) -> Bool,
        store: @escaping (inout AgentConfiguration, Double) -> Void
    ) -> ScalarDecoder {
        { text, _, configuration in
            guard let value = parseNumber(text) else { return .wrongType("a number") }
            guard value.isFinite, accepts(value) else { return .outOfRange }
            store(&configuration, value)
            return nil
        }
    }

    /// An optional finite number accepted by `accepts`; left empty it stays `nil` (the default).
    static func optionalNumber(
        _ keyPath: WritableKeyPath<AgentConfiguration, Double?>,
        allowed: String,
        accepts: @escaping (Double) -> Bool
    ) -> ConfigurationField {
        ConfigurationField(
            allowed: allowed,
            decode: numberDecoder(accepts: accepts) { $0[keyPath: keyPath] = $1 },
            render: { $0[keyPath: keyPath].map { .plain(formatNumber($0)) } ?? .null }
        )
    }

    /// A list of distinct texts, each checked by `check`. The names in it stand for things (groups), so a
    /// name written twice is a mistake worth reporting rather than a harmless repeat.
    static func textList(
        _ keyPath: WritableKeyPath<AgentConfiguration, [String]>,
        allowed: String,
        check: @escaping (String) -> FieldProblem?
    ) -> ConfigurationField {
        ConfigurationField(
            allowed: allowed,
            value: .list(
                decode: { elements, configuration in
                    var problems: [ElementProblem] = []
                    var seen: Set<String> = []
                    for (index, text) in elements.enumerated() {
                        if let problem = check(text) {
                            problems.append(ElementProblem(index: index, problem: problem))
                        } else if !seen.insert(text).inserted {
                            problems.append(
                                ElementProblem(
                                    index: index,
                                    problem: FieldProblem(kind: .invalidValue, problem: "is already in the list")
                                )
                            )
                        }
                    }
                    if problems.isEmpty { configuration[keyPath: keyPath] = elements }
                    return problems
                },
                render: { $0[keyPath: keyPath].map(RenderedScalar.text) }
            )
        )
    }

    /// A finite number accepted by `accepts`, described by `allowed`.
    static func number(
        _ keyPath: WritableKeyPath<AgentConfiguration, Double>,
        allowed: String,
        accepts: @escaping (Double) -> Bool
    ) -> ConfigurationField {
        ConfigurationField(
            allowed: allowed,
            decode: numberDecoder(accepts: accepts) { $0[keyPath: keyPath] = $1 },
            render: { .plain(formatNumber($0[keyPath: keyPath])) }
        )
    }

    /// `true` or `false` (YAML 1.1's yes/no/on/off too, as Yams reads them).
    static func flag(_ keyPath: WritableKeyPath<AgentConfiguration, Bool>) -> ConfigurationField {
        ConfigurationField(
            allowed: "true or false",
            decode: { text, _, configuration in
                switch text.lowercased() {
                case "true", "yes", "on": configuration[keyPath: keyPath] = true
                case "false", "no", "off": configuration[keyPath: keyPath] = false
                default: return .wrongType("true or false")
                }
                return nil
            },
            render: { .plain($0[keyPath: keyPath] ? "true" : "false") }
        )
    }

    /// One of a fixed set of words.
    static func choice<Choice: RawRepresentable & CaseIterable>(
        _ keyPath: WritableKeyPath<AgentConfiguration, Choice>
    ) -> ConfigurationField where Choice.RawValue == String {
        let names = Choice.allCases.map(\.rawValue)
        return ConfigurationField(
            allowed: "one of " + names.joined(separator: ", "),
            decode: { text, _, configuration in
                guard let value = Choice(rawValue: text) else { return .notAChoice(text, among: names) }
                configuration[keyPath: keyPath] = value
                return nil
            },
            // Choices are plain words that YAML cannot read as anything else, so they need no quotes.
            render: { .plain($0[keyPath: keyPath].rawValue) }
        )
    }

    /// One of a fixed list of words stored as text (the simulator's scenarios).
    static func word(
        _ keyPath: WritableKeyPath<AgentConfiguration, String>,
        among names: [String]
    ) -> ConfigurationField {
        ConfigurationField(
            allowed: "one of " + names.joined(separator: ", "),
            decode: { text, _, configuration in
                guard names.contains(text) else { return .notAChoice(text, among: names) }
                configuration[keyPath: keyPath] = text
                return nil
            },
            render: { .plain($0[keyPath: keyPath]) }
        )
    }
}

// MARK: - Reading and writing numbers and paths

extension ConfigurationField {
    /// YAML 1.1 allows `_` as a digit separator (`1_000`); a leading `+` is allowed too.
    static func parseInteger(_ text: String) -> Int? {
        Int(text.replacingOccurrences(of: "_", with: ""))
    }

    /// Decimal numbers as YAML writes them; `.inf` and `.nan` parse (and are then refused as out of range).
    static func parseNumber(_ text: String) -> Double? {
        let plain = text.replacingOccurrences(of: "_", with: "")
        switch plain.lowercased() {
        case ".inf", "+.inf": return .infinity
        case "-.inf": return -.infinity
        case ".nan": return .nan
        default: break
        }
        guard plain.first.map({ $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" }) == true else { return nil }
        return Double(plain)
    }

    /// Whole numbers without a fraction (`200`), others in Swift's shortest exact form (`0.5`, `1e-05`), so
    /// a written value reads back bit for bit.
    static func formatNumber(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    static func resolve(path: String, against baseDirectory: String?) -> String {
        guard let baseDirectory, !path.hasPrefix("/") else { return path }
        return URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: baseDirectory, isDirectory: true))
            .standardizedFileURL.path
    }
}
