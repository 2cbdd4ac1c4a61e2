/// The effective runtime configuration, computed from its layers every time, never kept as a snapshot:
/// config.yaml → fleet desired → group desired (in `control.groups` order, later wins) → device desired →
/// command overrides. Pure: the reconciler behind the control door owns one, feeds it what arrives (a reload,
/// a document, a command) and applies the difference between two `resolve()` results.
package struct ConfigurationLayers: Sendable {
    /// config.yaml as last loaded (environment overrides included).
    package private(set) var base: AgentConfiguration
    /// The desired documents in force, per layer, as received.
    package private(set) var documents: [ConfigurationLayer: DesiredDocument]
    /// What commands set, per key path.
    package private(set) var overrides: [String: RuntimeOverride]

    /// The effective configuration and where each runtime key's value came from.
    package struct Resolution: Sendable {
        package var configuration: AgentConfiguration
        /// Every runtime key path → its source.
        package var sources: [String: SettingSource]

        /// Every runtime key in config.yaml's order with its effective value (as config.yaml writes it) and
        /// source: the table `check-config --explain` prints and the status document carries.
        package var entries: [(keyPath: String, value: String, source: SettingSource)] {
            ConfigurationSchema.runtimeKeyPaths.compactMap { keyPath in
                guard let value = ConfigurationSchema.runtimeField(at: keyPath)?.renderedText(of: configuration)
                else { return nil }
                return (keyPath, value, sources[keyPath] ?? .configFile)
            }
        }
    }

    /// What became of an offered document.
    package enum Outcome: Sendable, Equatable {
        /// In force now; `supersededCommands` are the command overrides it replaced (keys it changed).
        case applied(supersededCommands: [String])
        /// The same version and content as the one in force (a retained copy heard again): nothing to do.
        case unchanged
        /// Older than the version in force, which stays.
        case stale(inForce: Int)
        /// Not usable; the version in force stays.
        case refused(ConfigurationError)
    }

    /// Starts from config.yaml and what was persisted; overrides that a layer has rewritten since are dropped.
    package init(
        base: AgentConfiguration,
        documents: [ConfigurationLayer: DesiredDocument] = [:],
        overrides: [String: RuntimeOverride] = [:]
    ) {
        self.base = base
        self.documents = documents
        self.overrides = overrides
        _ = pruneOverrides()
    }

    /// The layers that count, lowest first. A group the device is not in (no longer in `control.groups`) does
    /// not count even if its document was kept.
    package var order: [ConfigurationLayer] { [.fleet] + base.control.groups.map { .group($0) } + [.device] }

    package func resolve() -> Resolution {
        var configuration = base
        var sources: [String: SettingSource] = [:]
        for keyPath in ConfigurationSchema.runtimeKeyPaths { sources[keyPath] = .configFile }
        for layer in order {
            guard let document = documents[layer] else { continue }
            document.settings.apply(to: &configuration)
            for keyPath in document.settings.keyPaths { sources[keyPath] = .desired(layer, version: document.version) }
        }
        for (keyPath, override) in overrides {
            guard let field = ConfigurationSchema.runtimeField(at: keyPath), case .scalar(let decode, _) = field.value
            else { continue }
            _ = decode(override.value, FieldContext(baseDirectory: nil), &configuration)
            sources[keyPath] = .command(id: override.commandID, time: override.time)
        }
        return Resolution(configuration: configuration, sources: sources)
    }

    /// Offers a layer's document — settings, or a clear (`DesiredDocument.clear`), which takes the layer's settings
    /// away and keeps its version. `source` names it in a refusal (its topic).
    package mutating func receive(
        _ document: DesiredDocument,
        for layer: ConfigurationLayer,
        source: String
    ) -> Outcome {
        if document.clear && documents[layer] == nil {
            // Nothing to clear; the version is kept (and persisted), so an older document does not apply after it.
            documents[layer] = document
            return .applied(supersededCommands: [])
        }
        if let current = documents[layer] {
            if document.version < current.version { return .stale(inForce: current.version) }
            if document.version == current.version {
                if document == current { return .unchanged }
                return .refused(
                    ConfigurationError(
                        kind: .conflict,
                        keyPath: "version",
                        value: String(document.version),
                        problem: "is the version in force, with different content",
                        allowed: "a version higher than \(current.version) for every change "
                            + "(motion-agent fleet set does the read-modify-write)",
                        file: source
                    )
                )
            }
        }
        var candidate = self
        candidate.documents[layer] = document
        let superseded = candidate.pruneOverrides()
        if let problem = candidate.resolve().configuration.runtimeConflict(source: source) {
            return .refused(problem)
        }
        self = candidate
        return .applied(supersededCommands: superseded)
    }

    /// Records what a command set on top of every layer; refused whole, with the reason, when the result
    /// would not hold together (durable with QoS 0).
    package mutating func command(
        _ settings: ConfigurationOverlay,
        id: String,
        time: Double,
        source: String
    ) throws(ConfigurationError) {
        var candidate = self
        for (keyPath, value) in settings.values {
            candidate.overrides[keyPath] = RuntimeOverride(
                value: value,
                commandID: id,
                time: time,
                beneath: beneath(keyPath)
            )
        }
        if let problem = candidate.resolve().configuration.runtimeConflict(source: source) { throw problem }
        self = candidate
    }

    /// config.yaml was read again (start, SIGHUP, reload-config): command overrides of keys whose value it
    /// changed are superseded; returns them. Throws, changing nothing, when the overrides and desired layers
    /// on top of the new file would not hold together.
    package mutating func replaceBase(
        _ newBase: AgentConfiguration,
        source: String
    ) throws(ConfigurationError)
        -> [String]
    {
        var candidate = self
        candidate.base = newBase
        let superseded = candidate.pruneOverrides()
        if let problem = candidate.resolve().configuration.runtimeConflict(source: source) { throw problem }
        self = candidate
        return superseded
    }

    /// What each layer beneath the commands says for `keyPath` (`config.yaml` → `50`, `fleet` → `100`).
    package func beneath(_ keyPath: String) -> [String: String] {
        var values: [String: String] = [:]
        if let text = ConfigurationSchema.runtimeField(at: keyPath)?.renderedText(of: base) {
            values["config.yaml"] = text
        }
        for layer in order {
            if let value = documents[layer]?.settings[keyPath] { values[layer.description] = value }
        }
        return values
    }

    /// Drops the overrides whose key a layer beneath has written since the command; returns their key paths.
    private mutating func pruneOverrides() -> [String] {
        var superseded: [String] = []
        for (keyPath, override) in overrides where override.beneath != beneath(keyPath) {
            overrides[keyPath] = nil
            superseded.append(keyPath)
        }
        return superseded.sorted()
    }
}

extension AgentConfiguration {
    /// The first problem between runtime settings that are each valid alone (durable needs QoS 1 or 2), named
    /// as config.yaml's check names it.
    func runtimeConflict(source: String) -> ConfigurationError? {
        var decoder = ConfigurationDecoder(file: source, baseDirectory: nil)
        decoder.configuration = self
        decoder.checkDurableStreams()
        return decoder.errors.isEmpty ? nil : ConfigurationError(collecting: decoder.errors)
    }
}
