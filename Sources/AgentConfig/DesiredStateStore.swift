import AgentPorts
import Foundation

/// What the device keeps of its layers between runs, in `<state_dir>/desired/`: each desired document
/// exactly as received (`fleet.json`, `group-<name>.json`, `device.json`) and the command overrides per key
/// with their id and time (`overrides.json`) — never a snapshot of the effective configuration, which is
/// recomputed from config.yaml and these at every start. A device that boots with the broker unreachable
/// therefore runs its last known desired state, and an edit of config.yaml still counts.
package struct DesiredStateStore: Sendable {
    package let state: any StateDirectory

    package init(state: any StateDirectory) {
        self.state = state
    }

    /// `<state_dir>/desired`, for messages.
    package var directory: String { state.location(of: .desiredDocument("-")).dropLastPathComponent }
    /// The round-one file of stream settings saved by commands, migrated once.
    var legacyStreamsPath: String { state.location(of: .legacyStreams) }

    /// What was kept, and what could not be used (each a sentence naming the file, the problem and the fix).
    package struct Contents: Sendable {
        package var documents: [ConfigurationLayer: DesiredDocument] = [:]
        package var overrides: [String: RuntimeOverride] = [:]
        package var problems: [String] = []
    }

    /// Reads the documents of `layers` and the overrides. A kept document is opened again by `open` — checked by
    /// today's schema and, with signing on, its signature verified with today's keys: one that no longer passes
    /// is left out (reported), as a newly received one would be refused.
    package func load(
        layers: [ConfigurationLayer],
        open: (_ payload: [UInt8], _ layer: ConfigurationLayer) -> Result<DesiredDocument, any Error> = { payload, _ in
            Result { try DesiredDocument.decode(payload, source: "the kept document") }
        }
    ) -> Contents {
        var contents = Contents()
        for layer in layers {
            let path = state.location(of: Self.file(of: layer))
            do {
                guard let data = try state.read(Self.file(of: layer)) else { continue }
                contents.documents[layer] = try open(data, layer).get()
            } catch {
                contents.problems.append(
                    "\(path): \(error) — the \(layer) layer is left out until its next desired document arrives"
                )
            }
        }
        let overridesPath = state.location(of: .commandOverrides)
        let overrides: [UInt8]?
        do {
            overrides = try state.read(.commandOverrides)
        } catch {
            overrides = nil
            contents.problems.append("\(error): command overrides are dropped")
        }
        if let data = overrides {
            do {
                let kept = try JSONDecoder().decode([String: RuntimeOverride].self, from: Data(data))
                for (keyPath, override) in kept {
                    do {
                        let checked = try ConfigurationOverlay(
                            validating: [keyPath: override.value],
                            source: overridesPath
                        )
                        guard checked[keyPath] != nil else { continue }
                        contents.overrides[keyPath] = override
                    } catch {
                        contents.problems.append("\(error) — this command override is dropped")
                    }
                }
            } catch {
                contents.problems.append(
                    "\(overridesPath) is not a valid overrides file (\(error)): command overrides are dropped; "
                        + "delete the file to silence this"
                )
            }
        }
        return contents
    }

    /// Keeps a layer's document as received; nil (the retained document was cleared) deletes it.
    package func save(_ payload: [UInt8]?, for layer: ConfigurationLayer) throws(StateFileError) {
        guard let payload else { return try state.remove(Self.file(of: layer)) }
        try state.replace(Self.file(of: layer), with: payload)
    }

    /// Keeps the command overrides (an empty set deletes the file).
    package func save(overrides: [String: RuntimeOverride]) throws {
        if overrides.isEmpty { return try state.remove(.commandOverrides) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try state.replace(.commandOverrides, with: Array(encoder.encode(overrides)))
    }

    /// Round one saved every stream's settings after any command (`streams.json`), which pinned all of them
    /// over config.yaml for good. Read once: only the values that differ from config.yaml's become command
    /// overrides (of the keys a command had changed, as far as can be told); the file is renamed
    /// `streams.json.migrated` so this happens once. Returns nil when there is nothing to migrate.
    package func migrateLegacyStreams(base: AgentConfiguration) -> (ConfigurationOverlay, problems: [String])? {
        var problems: [String] = []
        let kept: [UInt8]?
        do {
            kept = try state.read(.legacyStreams)
        } catch {
            return (ConfigurationOverlay(), ["\(error): round one's stream settings are not migrated"])
        }
        guard let data = kept.map({ Data($0) }) else { return nil }
        var written: [String: String] = [:]
        if let legacy = try? JSONDecoder().decode([String: LegacyStream].self, from: data) {
            for (name, stream) in legacy {
                let prefix = "streams.\(name)."
                written[prefix + "enabled"] = String(stream.enabled)
                written[prefix + "rate_hz"] = String(stream.rateHz)
                written[prefix + "qos"] = String(stream.qos)
                written[prefix + "retain"] = String(stream.retain)
                if let batch = stream.batch { written[prefix + "batch"] = String(batch) }
                if let encoding = stream.encoding { written[prefix + "encoding"] = encoding }
                if let frame = stream.referenceFrame { written[prefix + "reference_frame"] = frame }
            }
        } else {
            problems.append("\(legacyStreamsPath) is not a round-one stream-settings file: ignored")
        }
        var differing: [String: String] = [:]
        for (keyPath, text) in written {
            // One value at a time, so one unusable value (a rate config.yaml no longer allows) drops alone.
            guard let field = ConfigurationSchema.runtimeField(at: keyPath),
                let checked = try? ConfigurationOverlay(validating: [keyPath: text], source: legacyStreamsPath),
                let value = checked[keyPath]
            else {
                problems.append("\(legacyStreamsPath): \(keyPath) = \(text) is not usable now: dropped")
                continue
            }
            if value != field.renderedText(of: base) { differing[keyPath] = value }
        }
        do {
            try state.replace(.migratedLegacyStreams, with: Array(data))
            try state.remove(.legacyStreams)
        } catch {
            problems.append(
                "cannot rename \(legacyStreamsPath) to streams.json.migrated (\(error)): "
                    + "make agent.state_dir writable, or the migration repeats at every start"
            )
        }
        let overlay = (try? ConfigurationOverlay(validating: differing, source: legacyStreamsPath)) ?? .init()
        return (overlay, problems)
    }

    /// `fleet.json`, `group-<name>.json` (the name with anything but letters, digits, `-`, `_` and `.` as
    /// `%XX`, so every group name is one safe file name), `device.json`, in `desired/`.
    static func file(of layer: ConfigurationLayer) -> StateFile {
        switch layer {
        case .fleet: return .desiredDocument("fleet")
        case .device: return .desiredDocument("device")
        case .group(let name):
            var safe = ""
            for byte in name.utf8 {
                let scalar = Unicode.Scalar(byte)
                if byte < 0x80,
                    scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar))
                        || "-_.".unicodeScalars.contains(scalar), !(safe.isEmpty && byte == UInt8(ascii: "."))
                {
                    safe.unicodeScalars.append(scalar)
                } else {
                    safe += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
                }
            }
            return .desiredDocument("group-\(safe)")
        }
    }

    /// The file of `layer`, for messages and tests.
    func path(of layer: ConfigurationLayer) -> String { state.location(of: Self.file(of: layer)) }

    /// Round one's `streams.json` entry.
    private struct LegacyStream: Decodable {
        var enabled: Bool
        var rateHz: Double
        var qos: Int
        var retain: Bool
        var referenceFrame: String?
        var batch: Int?
        var encoding: String?
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension String {
    /// The path without its last component (`/a/b/c.json` → `/a/b`).
    fileprivate var dropLastPathComponent: String {
        lastIndex(of: "/").map { String(self[..<$0]) } ?? self
    }
}
