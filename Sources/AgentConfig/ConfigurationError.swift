/// A configuration that cannot be used: the option, the value as written, what is accepted instead, and
/// where it came from (file and line, or the environment variable).
///
/// One load reports every problem it finds at once, so a user fixes a file in one round: the thrown error
/// describes the first problem and carries all of them in `errors`, in the order of the file. Its
/// `description` lists them all, one per line, e.g.
///
///     config.yaml:23: streams.accelerometer.rate_hz: 5000 is out of range — allowed: a number > 0 and ≤ 1000 (Hz)
package struct ConfigurationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of problem this is; tests and callers branch on it, users read `description`.
    package enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The file is not YAML (the line is where the parser stopped).
        case syntax
        /// The same key twice in one section.
        case duplicateKey
        /// A key the schema does not know (usually a typo; `suggestion` names the closest known key).
        case unknownKey
        /// A section where a value belongs, a value where a section belongs, text where a number belongs.
        case wrongType
        /// A number outside its range.
        case outOfRange
        /// A value of the right type that is not accepted (an unknown choice, a topic with a wildcard).
        case invalidValue
        /// A value that another setting makes necessary is not there.
        case missingValue
        /// Two settings that cannot hold together.
        case conflict
        /// A file or directory the configuration names cannot be read (or written, for the state directory).
        case fileUnavailable
    }

    package var kind: Kind
    /// The dotted path of the option, e.g. `streams.accelerometer.rate_hz`; empty for the whole file.
    package var keyPath: String
    /// The offending value as written in the file or the environment; `nil` when the value is missing.
    package var value: String?
    /// What the option accepts, in words.
    package var allowed: String
    /// 1-based line in `file`; `nil` for values from the environment or when there is no line.
    package var line: Int?
    /// The configuration file (as passed to the loader) or `nil` for the environment.
    package var file: String?
    /// The environment variable that supplied the value, e.g. `MOTION_AGENT_MQTT_PORT`.
    package var variable: String?
    /// The problem, phrased to follow the value: "is out of range", "is not a known key".
    package var problem: String
    /// A likely intended value or key ("did you mean …"), found by edit distance.
    package var suggestion: String?

    /// The problems found after this one in the same load.
    private var following: [ConfigurationError] = []

    package init(
        kind: Kind,
        keyPath: String,
        value: String?,
        problem: String,
        allowed: String,
        line: Int? = nil,
        file: String? = nil,
        variable: String? = nil,
        suggestion: String? = nil
    ) {
        self.kind = kind
        self.keyPath = keyPath
        self.value = value
        self.problem = problem
        self.allowed = allowed
        self.line = line
        self.file = file
        self.variable = variable
        self.suggestion = suggestion
    }

    /// Every problem of the load, this one first, each without followers.
    package var errors: [ConfigurationError] {
        var first = self
        first.following = []
        return [first] + following
    }

    /// One error carrying all of `errors` (which must not be empty), in the given order.
    init(collecting errors: [ConfigurationError]) {
        precondition(!errors.isEmpty, "an error needs at least one problem")
        self = errors[0]
        following = errors.dropFirst().map {
            var error = $0
            error.following = []
            return error
        }
    }

    package var description: String {
        let all = errors
        if all.count == 1 { return all[0].sentence }
        let origin = file.map { "\($0): " } ?? ""
        return "\(origin)\(all.count) configuration problems:\n"
            + all.map { "  " + $0.sentence }.joined(separator: "\n")
    }

    /// The one-line sentence for a single problem.
    private var sentence: String {
        var location: String
        if let variable {
            location = keyPath.isEmpty ? "environment \(variable)" : "environment \(variable) (\(keyPath))"
        } else {
            location = file ?? "configuration"
            if let line { location += ":\(line)" }
            if !keyPath.isEmpty { location += ": \(keyPath)" }
        }
        var sentence = location + ": "
        if let value {
            sentence += Self.quoted(value) + " "
        } else if keyPath.isEmpty {
            sentence += "the file "
        }
        sentence += problem
        if let suggestion { sentence += " — did you mean \(suggestion)?" }
        if !allowed.isEmpty { sentence += " — allowed: \(allowed)" }
        return sentence
    }

    /// Numbers and booleans read as written; text is quoted so spaces and empty strings show.
    static func quoted(_ value: String) -> String {
        if Double(value) != nil || ["true", "false"].contains(value) { return value }
        var escaped = ""
        for character in value {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            default: escaped.append(character)
            }
        }
        return "\"\(escaped)\""
    }
}
