import AgentPorts

extension ConfigurationSchema {
    /// The part of the configuration that may change while the agent runs: what a desired document or a
    /// command may set. Every stream's settings (device motion's reference frame among them) and the metrics
    /// interval; everything else (identity, broker, files, the source) needs a restart, so no layer above
    /// config.yaml can name it, and a document that tries is refused with the keys it may use.
    static var runtime: [Item] { runtimeItems }

    /// Built once, as `root` is.
    nonisolated(unsafe) private static let runtimeItems: [Item] = root.compactMap { item in
        switch (item.key, item.entry) {
        case ("streams", _):
            return item
        case ("metrics", .section(let children)):
            return .section("metrics", children.filter { $0.key == "interval_s" })
        default:
            return nil
        }
    }

    /// Every runtime key path (`streams.accelerometer.rate_hz`, …, `metrics.interval_s`), in schema order.
    static var runtimeKeyPaths: [String] { runtimeTable.keyPaths }

    /// The runtime fields, found once: the layers look a field up per key at every change and status
    /// document, and building the schema (a few hundred closures) for each lookup is most of their cost.
    /// Immutable after it is built, and its closures capture only key paths and constants.
    nonisolated(unsafe) private static let runtimeTable: (keyPaths: [String], fields: [String: ConfigurationField]) = {
        var keyPaths: [String] = []
        var fields: [String: ConfigurationField] = [:]
        func visit(_ items: [Item], prefix: String) {
            for item in items {
                let path = prefix.isEmpty ? item.key : prefix + "." + item.key
                switch item.entry {
                case .section(let children): visit(children, prefix: path)
                case .field(let field):
                    keyPaths.append(path)
                    fields[path] = field
                }
            }
        }
        visit(runtime, prefix: "")
        return (keyPaths, fields)
    }()

    /// Whether config.yaml has this key (a section or a value).
    static func contains(keyPath: String) -> Bool {
        var items = root
        for key in keyPath.split(separator: ".").map(String.init) {
            guard let item = items.first(where: { $0.key == key }) else { return false }
            switch item.entry {
            case .section(let children): items = children
            case .field: items = []
            }
        }
        return true
    }

    /// The runtime field at `keyPath`, or nil when the key is not runtime-changeable.
    static func runtimeField(at keyPath: String) -> ConfigurationField? {
        runtimeTable.fields[keyPath]
    }
}

extension ConfigurationField {
    /// The value at this field's key path in `configuration`, as the layers compare and report it.
    func renderedText(of configuration: AgentConfiguration) -> String? {
        guard case .scalar(_, let render) = value else { return nil }
        switch render(configuration) {
        case .text(let text), .plain(let text): return text
        case .null: return nil
        }
    }
}

extension ConfigurationSchema {
    /// What `effectiveYAML()` would write for the field, for comparing two configurations key by key.
    static func rendered(_ field: ConfigurationField, of configuration: AgentConfiguration) -> [RenderedScalar] {
        switch field.value {
        case .scalar(_, let render): [render(configuration)]
        case .list(_, let render): render(configuration)
        }
    }

    /// Every key path of config.yaml with its field, in schema order.
    static var allFields: [(keyPath: String, field: ConfigurationField)] {
        var found: [(String, ConfigurationField)] = []
        func visit(_ items: [Item], prefix: String) {
            for item in items {
                let path = prefix.isEmpty ? item.key : prefix + "." + item.key
                switch item.entry {
                case .section(let children): visit(children, prefix: path)
                case .field(let field): found.append((path, field))
                }
            }
        }
        visit(root, prefix: "")
        return found
    }
}

extension AgentConfiguration {
    /// What of `self` differs from `running` but applies only at the next start: every key outside the runtime
    /// part of the schema (`ConfigurationSchema.runtime`) whose value changed, named by its section
    /// (`mqtt`, `source`) or, in a section that also has runtime keys, by its key path
    /// (`metrics.prometheus_file`) — so the list follows the schema as keys are added.
    package func restartRequired(from running: AgentConfiguration) -> [String] {
        let runtimeSections = Set(ConfigurationSchema.runtimeKeyPaths.map { String($0.prefix { $0 != "." }) })
        var names: [String] = []
        for (keyPath, field) in ConfigurationSchema.allFields
        where ConfigurationSchema.runtimeField(at: keyPath) == nil
            && ConfigurationSchema.rendered(field, of: self) != ConfigurationSchema.rendered(field, of: running)
        {
            let section = String(keyPath.prefix { $0 != "." })
            let name = runtimeSections.contains(section) ? keyPath : section
            if !names.contains(name) { names.append(name) }
        }
        return names
    }
}

extension ConfigurationSchema {
    /// The runtime keys in words, for the error that refuses another key: the keys every stream has, then each
    /// stream's own, then the rest (`streams.<stream>.enabled, rate_hz, …, streams.device-motion.reference_frame,
    /// reference_attitude, metrics.interval_s`).
    static var runtimeKeysText: String {
        var common: [String] = []
        for descriptor in StreamDescriptor.table {
            for key in descriptor.settingKeys where !descriptor.extraSettings.contains(key) && !common.contains(key) {
                common.append(key)
            }
        }
        var parts = ["streams.<stream>." + common.joined(separator: ", ")]
        for descriptor in StreamDescriptor.table where !descriptor.extraSettings.isEmpty {
            parts.append("streams.\(descriptor.name.rawValue)." + descriptor.extraSettings.joined(separator: ", "))
        }
        parts += runtimeKeyPaths.filter { !$0.hasPrefix("streams.") }
        return parts.joined(separator: ", ")
    }
}

/// What a change of a setting does to the running agent — said once here, and by the docs' table (docs/fleet.md)
/// and `check-config --explain`, so no layer's change is reported as in force before it is.
package enum SettingEffect: String, Sendable, CaseIterable {
    /// Applies at once: the streams, the hardware plan and the reports change between two samples.
    case immediate = "applies at once"
    /// Applies once a resource it needs is open: `streams.<stream>.durable` opens the durable log (the first time
    /// a layer makes a stream durable, at start or at runtime); until then the status says it is not in force.
    case opensDurableLog = "opens the durable log"
    /// Needs a restart: no layer above config.yaml may set it, and a reload keeps the running value, saying so.
    case restart = "needs a restart"
}

extension SettingEffect {
    /// What changing the key at `keyPath` does while the agent runs.
    package static func of(keyPath: String) -> SettingEffect {
        guard ConfigurationSchema.runtimeField(at: keyPath) != nil else { return .restart }
        return keyPath.hasPrefix("streams.") && keyPath.hasSuffix(".durable") ? .opensDurableLog : .immediate
    }

    /// Every runtime key path with its effect, in schema order.
    package static var runtimeKeys: [(keyPath: String, effect: SettingEffect)] {
        ConfigurationSchema.runtimeKeyPaths.map { ($0, of(keyPath: $0)) }
    }
}
