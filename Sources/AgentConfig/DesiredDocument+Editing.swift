extension DesiredDocument {
    /// The payload as operators' tools publish it: `{"version": N, "metrics": {…}, "streams": {…}}`, nested
    /// like config.yaml, keys sorted, numbers and booleans plain, text quoted — so `decode` reads back
    /// exactly this document.
    package func encoded() -> [UInt8] {
        // Nested sections from the dotted key paths; the field's own rendering says whether a value is text.
        var scratch = AgentConfiguration()
        settings.apply(to: &scratch)
        var tree = JSONTree.section([:])
        for keyPath in settings.keyPaths {
            guard let field = ConfigurationSchema.runtimeField(at: keyPath),
                case .scalar(_, let render) = field.value
            else { continue }
            let leaf: JSONTree =
                switch render(scratch) {
                case .text(let text): .text(text)
                // Choices render plain for YAML; JSON needs them quoted.
                case .plain(let text) where Double(text) != nil || text == "true" || text == "false": .plain(text)
                case .plain(let text): .text(text)
                case .null: .plain("null")
                }
            tree.insert(leaf, at: keyPath.split(separator: ".").map(String.init))
        }
        tree.insert(.plain(String(version)), at: ["version"])
        if clear { tree.insert(.plain("true"), at: ["clear"]) }
        var out = ""
        tree.write(into: &out)
        return Array(out.utf8)
    }

    /// The next version of this document for `fleet set` / `fleet unset`: `version + 1`, the `written` values
    /// (key path → text, checked by the config schema like everything else) on top, and `unset` key paths
    /// (or whole sections, `streams.gyroscope`) removed.
    package func updating(
        setting written: [String: String],
        unsetting unset: [String] = [],
        source: String
    ) throws(ConfigurationError) -> DesiredDocument {
        let changes = try ConfigurationOverlay(validating: written, source: source)
        var unknown: [ConfigurationError] = []
        var removed: [String] = []
        for prefix in unset {
            let matching = settings.keyPaths.filter { $0 == prefix || $0.hasPrefix(prefix + ".") }
            if matching.isEmpty, !ConfigurationSchema.contains(keyPath: prefix) {
                unknown.append(
                    ConfigurationError(
                        kind: .unknownKey,
                        keyPath: prefix,
                        value: prefix,
                        problem: "is not a key of config.yaml",
                        allowed: "a key path such as streams.accelerometer.rate_hz, or a section such as "
                            + "streams.accelerometer",
                        file: source
                    )
                )
            }
            removed += matching
        }
        if !unknown.isEmpty { throw ConfigurationError(collecting: unknown) }
        // Editing a cleared layer starts from nothing, as the devices do.
        return DesiredDocument(version: version + 1, settings: settings.removing(removed).merging(changes))
    }
}

/// A JSON object tree for `encoded()`: sections by key, leaves already rendered.
private indirect enum JSONTree {
    case section([String: JSONTree])
    case text(String)
    case plain(String)

    mutating func insert(_ leaf: JSONTree, at path: [String]) {
        guard let first = path.first else {
            self = leaf
            return
        }
        guard case .section(var children) = self else { return }
        var child = children[first] ?? .section([:])
        child.insert(leaf, at: Array(path.dropFirst()))
        children[first] = child
        self = .section(children)
    }

    func write(into out: inout String) {
        switch self {
        case .plain(let text):
            out += text
        case .text(let text):
            out += "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case _ where scalar.value < 0x20:
                    out +=
                        "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                        + String(scalar.value, radix: 16)
                default: out.unicodeScalars.append(scalar)
                }
            }
            out += "\""
        case .section(let children):
            out += "{"
            for (index, key) in children.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                JSONTree.text(key).write(into: &out)
                out += ":"
                children[key]!.write(into: &out)
            }
            out += "}"
        }
    }
}
