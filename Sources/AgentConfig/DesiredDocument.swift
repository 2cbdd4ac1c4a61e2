import Yams

/// One layer's desired state as an operator published it: `{"version": 13, "streams": {…}, "metrics": {…}}`, a
/// retained MQTT message on the fleet, a group's or the device's `desired` topic. The version rises with every
/// publish, so a device that hears an older one (a broker that replays a stale retained copy) keeps what it has.
public struct DesiredDocument: Sendable, Equatable, Codable {
    /// The largest version a JSON number holds exactly in every subscriber's language (2⁵³).
    public static let maximumVersion = 9_007_199_254_740_992

    public var version: Int
    public var settings: ConfigurationOverlay

    public init(version: Int, settings: ConfigurationOverlay) {
        self.version = version
        self.settings = settings
    }

    /// Reads a payload: UTF-8 JSON (or YAML) with `version` and any of config.yaml's runtime keys. `source`
    /// names the document in errors (e.g. `motion/fleet/desired`). Every problem is reported at once, each
    /// as config.yaml's would be: the key path, the value, what is allowed.
    public static func decode(_ payload: [UInt8], source: String) throws(ConfigurationError) -> DesiredDocument {
        guard let text = String(validating: payload, as: UTF8.self) else {
            throw problem(.syntax, "is not UTF-8 text", source: source)
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text, .basic)
        } catch {
            throw problem(.syntax, "is not valid JSON: \(error)", source: source)
        }
        guard case .mapping(let mapping)? = root else {
            throw problem(.wrongType, "is not a JSON object", source: source)
        }
        var rest: [(Node, Node)] = []
        var versionNode: Node?
        for (key, value) in mapping {
            if key.string == "version" { versionNode = value } else { rest.append((key, value)) }
        }
        var errors: [ConfigurationError] = []
        var version = 0
        let allowed = "a whole number 1–\(maximumVersion), higher than the version published before"
        if let versionNode, case .scalar(let scalar) = versionNode,
            let value = Int(scalar.string), value >= 1, value <= maximumVersion
        {
            version = value
        } else {
            errors.append(
                ConfigurationError(
                    kind: versionNode == nil ? .missingValue : .invalidValue,
                    keyPath: "version",
                    value: versionNode?.string,
                    problem: versionNode == nil ? "is missing" : "is not a version",
                    allowed: allowed,
                    line: versionNode?.mark?.line,
                    file: source
                )
            )
        }
        var settings = ConfigurationOverlay()
        do {
            settings = try ConfigurationOverlay.decode(.mapping(Node.Mapping(rest)), source: source)
        } catch {
            errors += error.errors
        }
        if !errors.isEmpty { throw ConfigurationError(collecting: errors) }
        return DesiredDocument(version: version, settings: settings)
    }

    private static func problem(_ kind: ConfigurationError.Kind, _ text: String, source: String) -> ConfigurationError {
        ConfigurationError(
            kind: kind,
            keyPath: "",
            value: nil,
            problem: text,
            allowed: "a JSON object: {\"version\": N, \"streams\": {\"<stream>\": {\"rate_hz\": …}}, "
                + "\"metrics\": {\"interval_s\": …}}",
            file: source
        )
    }
}
