import MotionWire

/// One layer's desired state as an operator published it: `{"version": 13, "streams": {…}, "metrics": {…}}`, a
/// retained MQTT message on the fleet, a group's or the device's `desired` topic. The version rises with every
/// publish, so a device that hears an older one (a broker that replays a stale retained copy) keeps what it has.
///
/// A layer goes away only by a document that says so, `{"version": 14, "clear": true}`, retained like any other:
/// never because a broker retains nothing (an empty payload, or a cluster node that never had the document),
/// and a device that was away when it was published finds it waiting when it connects. Its version is kept, so a
/// replayed older document is refused after it as after any other.
package struct DesiredDocument: Sendable, Equatable, Codable {
    /// The largest version a JSON number holds exactly in every subscriber's language (2⁵³).
    package static let maximumVersion = 9_007_199_254_740_992

    package var version: Int
    package var settings: ConfigurationOverlay
    /// The layer is cleared: it sets nothing, and the version stays in force.
    package var clear: Bool

    package init(version: Int, settings: ConfigurationOverlay, clear: Bool = false) {
        self.version = version
        self.settings = settings
        self.clear = clear
    }

    /// A clear of a layer at `version`.
    package static func clearing(version: Int) -> DesiredDocument {
        DesiredDocument(version: version, settings: ConfigurationOverlay(), clear: true)
    }

    /// Reads a payload: strict JSON (never YAML: network input) with `version`, optionally `clear`, and any of
    /// config.yaml's runtime keys. `source` names the document in errors (e.g. `motion/fleet/desired`). Every
    /// problem is reported at once, each as config.yaml's would be: the key path, the value, what is allowed.
    package static func decode(_ payload: [UInt8], source: String) throws(ConfigurationError) -> DesiredDocument {
        let root: StrictJSON.Value
        do {
            root = try StrictJSON.parse(payload, limits: .desiredDocument)
        } catch {
            throw problem(.syntax, "is not valid JSON: it \(error)", source: source)
        }
        guard case .object(let members) = root else {
            throw problem(.wrongType, "is not a JSON object", source: source)
        }
        return try decode(members: members, source: source)
    }

    /// Reads a document's members (a signed envelope's, once opened and its `target` taken out).
    package static func decode(
        members: [(key: String, value: StrictJSON.Value)],
        source: String
    ) throws(ConfigurationError) -> DesiredDocument {
        var rest: [(key: String, value: StrictJSON.Value)] = []
        var versionValue: StrictJSON.Value?
        var clearValue: StrictJSON.Value?
        for member in members {
            switch member.key {
            case "version": versionValue = member.value
            case "clear": clearValue = member.value
            default: rest.append(member)
            }
        }
        var errors: [ConfigurationError] = []
        var version = 0
        let allowed = "a whole number 1–\(maximumVersion), higher than the version published before"
        if let number = versionValue?.integer, number >= 1, number <= maximumVersion {
            version = number
        } else {
            errors.append(
                ConfigurationError(
                    kind: versionValue == nil ? .missingValue : .invalidValue,
                    keyPath: "version",
                    value: versionValue.map(Self.text),
                    problem: versionValue == nil ? "is missing" : "is not a version",
                    allowed: allowed,
                    file: source
                )
            )
        }
        var clear = false
        switch clearValue {
        case nil, .bool(false)?: break
        case .bool(true)?:
            clear = true
            if !rest.isEmpty {
                errors.append(
                    ConfigurationError(
                        kind: .invalidValue,
                        keyPath: "clear",
                        value: "true",
                        problem: "comes with settings (\(rest.map(\.key).joined(separator: ", ")))",
                        allowed: "{\"version\": N, \"clear\": true} alone: a clear sets nothing",
                        file: source
                    )
                )
            }
        case let other?:
            errors.append(
                ConfigurationError(
                    kind: .wrongType,
                    keyPath: "clear",
                    value: text(other),
                    problem: "is not true or false",
                    allowed: "true, to clear the layer",
                    file: source
                )
            )
        }
        var settings = ConfigurationOverlay()
        do {
            settings = try ConfigurationOverlay.decode(json: rest, source: source)
        } catch {
            errors += error.errors
        }
        if !errors.isEmpty { throw ConfigurationError(collecting: errors) }
        return DesiredDocument(version: version, settings: settings, clear: clear)
    }

    private static func text(_ value: StrictJSON.Value) -> String {
        switch value {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .number(let n): n
        case .string(let s): Printable.text(s, limit: 64)
        case .array: "[…]"
        case .object: "{…}"
        }
    }

    private static func problem(_ kind: ConfigurationError.Kind, _ text: String, source: String) -> ConfigurationError {
        ConfigurationError(
            kind: kind,
            keyPath: "",
            value: nil,
            problem: text,
            allowed: "a JSON object: {\"version\": N, \"streams\": {\"<stream>\": {\"rate_hz\": …}}, "
                + "\"metrics\": {\"interval_s\": …}}, or {\"version\": N, \"clear\": true}",
            file: source
        )
    }
}
