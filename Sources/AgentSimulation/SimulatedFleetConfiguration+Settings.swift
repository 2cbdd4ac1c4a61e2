import AgentConfig

extension SimulatedFleetConfiguration {
    /// config.yaml's text for `deviceID` with `settings` added, each a dotted key path and its YAML value —
    /// `("outbox.replay_rate", "500")`, `("streams.accelerometer.expiry_s", "2")`, `("mqtt.protocol", "v311")`,
    /// `("home_assistant.enabled", "true")` — placed inside the section this configuration already writes (so
    /// `outbox:`, `mqtt:`, `metrics:` or a stream's section is not written twice, which YAML refuses), or in a
    /// new top-level section. Paths of two or three levels; a key the section already has is written again, which
    /// the loader refuses with an error naming it: change such a key through the struct's own properties.
    package func yaml(deviceID: String, adding settings: [(path: String, value: String)]) -> String {
        var lines = yaml(deviceID: deviceID).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (path, value) in settings {
            let keys = path.split(separator: ".").map(String.init)
            precondition(
                (2...3).contains(keys.count),
                "a setting path has two or three levels (section.key or section.name.key): \(path)"
            )
            Self.insert(keys: keys, value: value, into: &lines)
        }
        return lines.joined(separator: "\n")
    }

    /// The configuration a device reads from `yaml(deviceID:adding:)`, through `ConfigurationLoader`.
    package func configuration(
        deviceID: String,
        adding settings: [(path: String, value: String)]
    ) throws(ConfigurationError) -> AgentConfiguration {
        try ConfigurationLoader.decode(
            yaml: yaml(deviceID: deviceID, adding: settings),
            source: "simulated config.yaml (\(deviceID))"
        )
    }

    /// Inserts `keys.last: value` under the section `keys.dropLast()`, creating what is missing.
    private static func insert(keys: [String], value: String, into lines: inout [String]) {
        var start = 0
        var end = lines.count
        var indent = ""
        for key in keys.dropLast() {
            let header = indent + key + ":"
            if let found = (start..<end).first(where: { lines[$0] == header }) {
                start = found + 1
                end =
                    (start..<end).first { index in
                        let line = lines[index]
                        return !line.isEmpty && !line.hasPrefix(indent + "  ")
                    } ?? end
            } else {
                lines.insert(header, at: end)
                start = end + 1
                end = start
            }
            indent += "  "
        }
        lines.insert(indent + keys[keys.count - 1] + ": " + value, at: start)
    }
}
