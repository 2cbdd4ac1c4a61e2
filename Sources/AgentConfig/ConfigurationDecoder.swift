import Yams

/// Reads a composed YAML tree against `ConfigurationSchema`, collecting every problem instead of stopping at
/// the first, and remembering where each value came from (line or environment variable) for later checks.
struct ConfigurationDecoder {
    var configuration = AgentConfiguration()
    var errors: [ConfigurationError] = []
    /// Key path → 1-based line of its value (or of the section's key).
    var lines: [String: Int] = [:]
    /// Key path → the environment variable that replaced the file's value.
    var variables: [String: String] = [:]
    /// Key paths whose value was refused; later checks skip them so one mistake reports once.
    var refused: Set<String> = []

    let file: String
    let context: FieldContext

    init(file: String, baseDirectory: String?) {
        self.file = file
        self.context = FieldContext(baseDirectory: baseDirectory)
    }

    /// Scalar leaves read without a problem: key path → the value as written (the runtime layers keep these).
    var assigned: [String: String] = [:]

    /// Reads the document's root against `schema` (the whole file's, or the runtime part's for a desired
    /// document); `nil` (an empty file, or only comments) keeps every default.
    mutating func decode(root: Node?, schema: [ConfigurationSchema.Item] = ConfigurationSchema.root) {
        guard let root else { return }
        walk(root, items: schema, path: "")
    }

    mutating func report(
        _ kind: ConfigurationError.Kind,
        keyPath: String,
        value: String?,
        problem: String,
        allowed: String,
        suggestion: String? = nil,
        line: Int? = nil
    ) {
        let variable = variables[keyPath]
        errors.append(
            ConfigurationError(
                kind: kind,
                keyPath: keyPath,
                value: value,
                problem: problem,
                allowed: allowed,
                line: variable == nil ? (line ?? lines[keyPath]) : nil,
                file: variable == nil ? file : nil,
                variable: variable,
                suggestion: suggestion
            )
        )
        refused.insert(keyPath)
    }

    // MARK: - Walking the tree

    private mutating func walk(_ node: Node, items: [ConfigurationSchema.Item], path: String) {
        if Self.isNull(node) { return }  // `mqtt:` with nothing under it: the section's defaults.
        let keys = items.map(\.key)
        guard case .mapping(let mapping) = node else {
            report(
                .wrongType,
                keyPath: path,
                value: Self.written(node),
                problem: Self.notA("section", node),
                allowed: "a section with the keys " + keys.joined(separator: ", "),
                line: node.mark?.line
            )
            return
        }
        for (keyNode, valueNode) in mapping {
            let key = keyNode.string ?? ""
            let keyPath = path.isEmpty ? key : path + "." + key
            let line = keyNode.mark?.line
            guard case .scalar = keyNode, let item = items.first(where: { $0.key == key }) else {
                reportUnknown(key: key, keyNode: keyNode, in: path, keys: keys)
                continue
            }
            switch item.entry {
            case .section(let children):
                lines[keyPath] = line
                walk(valueNode, items: children, path: keyPath)
            case .field(let field):
                lines[keyPath] = valueNode.mark?.line ?? line
                read(valueNode, into: field, keyPath: keyPath)
            }
        }
    }

    private mutating func read(_ node: Node, into field: ConfigurationField, keyPath: String) {
        if Self.isNull(node) { return }  // `port:` with no value: the default.
        switch field.value {
        case .scalar(let decode, _):
            guard case .scalar(let scalar) = node else {
                report(
                    .wrongType,
                    keyPath: keyPath,
                    value: nil,
                    problem: Self.notA("single value", node),
                    allowed: field.allowed
                )
                return
            }
            if let problem = decode(scalar.string, context, &configuration) {
                assigned[keyPath] = nil
                report(
                    problem.kind,
                    keyPath: keyPath,
                    value: scalar.string,
                    problem: problem.problem,
                    allowed: field.allowed,
                    suggestion: problem.suggestion
                )
            } else {
                assigned[keyPath] = scalar.string
            }
        case .list(let decode, _):
            readList(node, decode: decode, allowed: field.allowed, section: field.elementSection, keyPath: keyPath)
        }
    }

    /// Reads a list; a problem with an element names it `key[index]` (0-based, as yq and jq count) at the
    /// element's own line, and any problem keeps the whole option at its default.
    private mutating func readList(
        _ node: Node,
        decode: ConfigurationField.ListDecoder,
        allowed: String,
        section: ConfigurationField.ElementSection? = nil,
        keyPath: String
    ) {
        guard case .sequence(let sequence) = node else {
            // A single name without brackets reads as text here; say how to write it as a list.
            let problem =
                if case .scalar = node {
                    "is a single value, not a list (write [\(Self.written(node) ?? "")], or one `- name` per line)"
                } else {
                    Self.notA("list", node)
                }
            report(.wrongType, keyPath: keyPath, value: Self.written(node), problem: problem, allowed: allowed)
            return
        }
        let elements = Array(sequence)
        var texts: [String] = []
        // The element index of each text, to name and place a problem `decode` finds.
        var positions: [Int] = []
        var malformed = false
        for (index, element) in elements.enumerated() {
            if case .scalar(let scalar) = element, !Self.isNull(element) {
                texts.append(scalar.string)
                positions.append(index)
                continue
            }
            if let section, case .mapping(let mapping) = element {
                switch Self.elementText(mapping, section) {
                case .success(let text):
                    texts.append(text)
                    positions.append(index)
                case .failure(let problem):
                    malformed = true
                    report(
                        problem.kind,
                        keyPath: "\(keyPath)[\(index)]",
                        value: nil,
                        problem: problem.problem,
                        allowed: allowed,
                        line: element.mark?.line
                    )
                }
                continue
            }
            malformed = true
            report(
                Self.isNull(element) ? .invalidValue : .wrongType,
                keyPath: "\(keyPath)[\(index)]",
                value: Self.written(element),
                problem: Self.isNull(element) ? "is an empty list element" : Self.notA("single value", element),
                allowed: allowed,
                line: element.mark?.line
            )
        }
        // The well-formed elements are checked too, so one load reports every problem of the list.
        var decoded = configuration
        let problems = decode(texts, &decoded)
        for element in problems {
            let index = positions[element.index]
            report(
                element.problem.kind,
                keyPath: "\(keyPath)[\(index)]",
                value: texts[element.index],
                problem: element.problem.problem,
                allowed: allowed,
                suggestion: element.problem.suggestion,
                line: elements[index].mark?.line
            )
        }
        if malformed || !problems.isEmpty {
            refused.insert(keyPath)
        } else {
            configuration = decoded
        }
    }

    /// The text a list element written as a section stands for: every key known, every value a single one.
    static func elementText(
        _ mapping: Node.Mapping,
        _ section: ConfigurationField.ElementSection
    ) -> Result<String, FieldProblem> {
        var values: [String: String] = [:]
        for (keyNode, valueNode) in mapping {
            let key = written(keyNode) ?? ""
            guard section.keys.contains(key) else {
                return .failure(
                    FieldProblem(
                        kind: .unknownKey,
                        problem: "has the key \"\(key)\"; its keys are \(section.keys.joined(separator: ", "))"
                    )
                )
            }
            guard case .scalar(let scalar) = valueNode, !isNull(valueNode) else {
                return .failure(FieldProblem(kind: .invalidValue, problem: "has no single value for \(key)"))
            }
            values[key] = scalar.string
        }
        return section.text(values)
    }

    private mutating func reportUnknown(key: String, keyNode: Node, in path: String, keys: [String]) {
        let keyPath = path.isEmpty ? key : path + "." + key
        let section = path.isEmpty ? "at the top level" : "in \(path)"
        var suggestion = EditDistance.closest(to: key, among: keys)
        if suggestion == nil {
            // The right key in the wrong section (`host` under `source`): name its full path.
            suggestion = ConfigurationSchema.keyPaths(endingWith: key).first
        }
        var problem = "is not a known key \(section)"
        var allowed = keys.joined(separator: ", ")
        if path == "streams" {
            problem = "is not a stream this agent publishes"
        }
        if let removed = ConfigurationSchema.removedKeys[keyPath] {
            problem = removed.problem
            allowed = removed.fix
            suggestion = nil
        }
        report(
            .unknownKey,
            keyPath: keyPath,
            value: keyNode.string ?? Self.written(keyNode) ?? "",
            problem: problem,
            allowed: allowed,
            suggestion: suggestion,
            line: keyNode.mark?.line
        )
    }

    // MARK: - Node helpers

    /// A plain `~`, `null` or nothing: YAML's null. Quoted `"null"` is text.
    static func isNull(_ node: Node) -> Bool {
        guard case .scalar(let scalar) = node, scalar.style == .plain || scalar.style == .any else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    /// The value as written, for scalars; sections and lists are described by `notA` instead.
    static func written(_ node: Node) -> String? {
        if case .scalar(let scalar) = node { return scalar.string }
        return nil
    }

    static func notA(_ expected: String, _ node: Node) -> String {
        switch node {
        case .mapping: "is a section, not a \(expected)"
        case .sequence: "is a list, not a \(expected)"
        case .scalar, .alias: "is not a \(expected)"
        }
    }
}
