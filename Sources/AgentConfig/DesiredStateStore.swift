import AgentPorts
import Foundation

/// What the device keeps of its layers between runs, in `<state_dir>/desired/`: each desired document
/// exactly as received (`fleet.json`, `group-<name>.json`, `device.json`) and the command overrides per key
/// with their id and time (`overrides.json`) — never a snapshot of the effective configuration, which is
/// recomputed from config.yaml and these at every start. A device that boots with the broker unreachable
/// therefore runs its last known desired state, and an edit of config.yaml still counts.
public struct DesiredStateStore: Sendable {
    /// `<state_dir>/desired`.
    public let directory: String
    /// The round-one file of stream settings saved by commands, migrated once.
    let legacyStreamsPath: String

    public init(stateDirectory: String) {
        directory = stateDirectory + "/desired"
        legacyStreamsPath = stateDirectory + "/streams.json"
    }

    /// What was kept, and what could not be used (each a sentence naming the file, the problem and the fix).
    public struct Contents: Sendable {
        public var documents: [ConfigurationLayer: DesiredDocument] = [:]
        public var overrides: [String: RuntimeOverride] = [:]
        public var problems: [String] = []
    }

    /// Reads the documents of `layers` and the overrides. A kept document is checked again by today's schema:
    /// one that no longer passes is left out (reported), as a newly received one would be refused.
    public func load(layers: [ConfigurationLayer]) -> Contents {
        var contents = Contents()
        for layer in layers {
            let path = self.path(of: layer)
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            do {
                contents.documents[layer] = try DesiredDocument.decode(Array(data), source: path)
            } catch {
                contents.problems.append(
                    "\(error) — the \(layer) layer is left out until its next desired document arrives"
                )
            }
        }
        let overridesPath = directory + "/overrides.json"
        if let data = FileManager.default.contents(atPath: overridesPath) {
            do {
                let kept = try JSONDecoder().decode([String: RuntimeOverride].self, from: data)
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
    public func save(_ payload: [UInt8]?, for layer: ConfigurationLayer) throws {
        try ensureDirectory()
        let path = self.path(of: layer)
        guard let payload else {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            return
        }
        try AtomicFile.write(payload, to: path)
    }

    /// Keeps the command overrides (an empty set deletes the file).
    public func save(overrides: [String: RuntimeOverride]) throws {
        try ensureDirectory()
        let path = directory + "/overrides.json"
        if overrides.isEmpty {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try AtomicFile.write(Array(encoder.encode(overrides)), to: path)
    }

    /// Round one saved every stream's settings after any command (`streams.json`), which pinned all of them
    /// over config.yaml for good. Read once: only the values that differ from config.yaml's become command
    /// overrides (of the keys a command had changed, as far as can be told); the file is renamed
    /// `streams.json.migrated` so this happens once. Returns nil when there is nothing to migrate.
    public func migrateLegacyStreams(base: AgentConfiguration) -> (ConfigurationOverlay, problems: [String])? {
        guard let data = FileManager.default.contents(atPath: legacyStreamsPath) else { return nil }
        var problems: [String] = []
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
            try FileManager.default.moveItem(atPath: legacyStreamsPath, toPath: legacyStreamsPath + ".migrated")
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
    /// `%XX`, so every group name is one safe file name), `device.json`.
    func path(of layer: ConfigurationLayer) -> String {
        switch layer {
        case .fleet: return directory + "/fleet.json"
        case .device: return directory + "/device.json"
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
            return directory + "/group-\(safe).json"
        }
    }

    private func ensureDirectory() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

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
