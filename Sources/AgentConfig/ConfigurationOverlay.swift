import MotionWire
import Yams

/// A partial configuration over the runtime keys (`streams.accelerometer.rate_hz: 100`): one layer above
/// config.yaml — a fleet, group or device desired document, or what commands set. Every value was validated
/// by the config schema, the same check and the same error whichever door it came through, and is kept in the
/// form `effectiveYAML()` writes (`100` and `100.0` are one value), so layers can be compared key by key.
package struct ConfigurationOverlay: Sendable, Equatable, Codable {
    /// Key path → value, in canonical form.
    package private(set) var values: [String: String]

    package init() { values = [:] }

    package var isEmpty: Bool { values.isEmpty }

    /// The key paths this layer sets, sorted.
    package var keyPaths: [String] { values.keys.sorted() }

    package subscript(keyPath: String) -> String? { values[keyPath] }

    /// Values as a command names them (key path → text as written), checked like config.yaml's: every
    /// problem at once, each naming the key, the value and what is allowed; `source` says where they came from.
    package init(validating written: [String: String], source: String) throws(ConfigurationError) {
        var errors: [ConfigurationError] = []
        var values: [String: String] = [:]
        for (keyPath, text) in written.sorted(by: { $0.key < $1.key }) {
            guard let field = ConfigurationSchema.runtimeField(at: keyPath) else {
                errors.append(Self.notRuntime(keyPath: keyPath, value: text, source: source))
                continue
            }
            var scratch = AgentConfiguration()
            guard case .scalar(let decode, _) = field.value else { continue }
            if let problem = decode(text, FieldContext(baseDirectory: nil), &scratch) {
                errors.append(
                    ConfigurationError(
                        kind: problem.kind,
                        keyPath: keyPath,
                        value: text,
                        problem: problem.problem,
                        allowed: field.allowed,
                        file: source,
                        suggestion: problem.suggestion
                    )
                )
                continue
            }
            values[keyPath] = field.renderedText(of: scratch)
        }
        if !errors.isEmpty { throw ConfigurationError(collecting: errors) }
        self.values = values
    }

    /// Reads a YAML or JSON mapping (already composed) against the runtime part of the schema.
    static func decode(_ node: Node, source: String) throws(ConfigurationError) -> ConfigurationOverlay {
        var decoder = ConfigurationDecoder(file: source, baseDirectory: nil)
        decoder.decode(root: node, schema: ConfigurationSchema.runtime)
        if !decoder.errors.isEmpty {
            // Keys outside the runtime part are refused with a reason a user can act on, not as typos.
            let errors = decoder.errors.map { error -> ConfigurationError in
                guard error.kind == .unknownKey, ConfigurationSchema.contains(keyPath: error.keyPath) else {
                    return error
                }
                return notRuntime(keyPath: error.keyPath, value: error.value, source: source, line: error.line)
            }
            throw ConfigurationError(collecting: errors)
        }
        return try ConfigurationOverlay(validating: decoder.assigned, source: source)
    }

    /// Reads the members of a JSON object that came from the network (a desired document's, the version taken
    /// out) against the runtime part of the schema, with config.yaml's decoder and its messages (document order,
    /// suggestions for typos, keys that need a restart named by section). The JSON tree is handed over as the
    /// decoder's nodes directly: nothing of it is parsed as YAML.
    static func decode(
        json members: [(key: String, value: StrictJSON.Value)],
        source: String
    ) throws(ConfigurationError) -> ConfigurationOverlay {
        try decode(node(.object(members)), source: source)
    }

    /// The decoder's node for a JSON value: strings double-quoted (so `"null"` or `"123"` stay text), numbers,
    /// booleans and null plain, as config.yaml writes them.
    static func node(_ value: StrictJSON.Value) -> Node {
        switch value {
        case .null: .scalar(Node.Scalar("null", .implicit, .plain))
        case .bool(let flag): .scalar(Node.Scalar(flag ? "true" : "false", .implicit, .plain))
        case .number(let literal): .scalar(Node.Scalar(literal, .implicit, .plain))
        case .string(let text): .scalar(Node.Scalar(text, .implicit, .doubleQuoted))
        case .array(let elements): .sequence(Node.Sequence(elements.map(node)))
        case .object(let members): .mapping(Node.Mapping(members.map { (node(.string($0.key)), node($0.value)) }))
        }
    }

    /// Writes every value into `configuration`.
    package func apply(to configuration: inout AgentConfiguration) {
        for (keyPath, text) in values {
            guard let field = ConfigurationSchema.runtimeField(at: keyPath),
                case .scalar(let decode, _) = field.value
            else { continue }
            _ = decode(text, FieldContext(baseDirectory: nil), &configuration)
        }
    }

    /// This overlay with `other`'s values on top.
    package func merging(_ other: ConfigurationOverlay) -> ConfigurationOverlay {
        var merged = self
        merged.values.merge(other.values) { _, new in new }
        return merged
    }

    /// This overlay without `keyPaths`.
    package func removing(_ keyPaths: some Sequence<String>) -> ConfigurationOverlay {
        var trimmed = self
        for keyPath in keyPaths { trimmed.values[keyPath] = nil }
        return trimmed
    }

    private static func notRuntime(
        keyPath: String,
        value: String?,
        source: String,
        line: Int? = nil
    ) -> ConfigurationError {
        let known = ConfigurationSchema.contains(keyPath: keyPath)
        return ConfigurationError(
            kind: .unknownKey,
            keyPath: keyPath,
            value: value,
            problem: known
                ? "cannot change while the agent runs (set it in config.yaml and restart the agent)"
                : "is not a key a desired document or command can set",
            allowed: ConfigurationSchema.runtimeKeysText,
            line: line,
            file: source
        )
    }
}
