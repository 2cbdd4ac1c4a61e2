import AgentConfig

extension SimulatedFleetConfiguration {
    /// `yaml(deviceID:)` with more keys in its `mqtt:` and `control:` sections (lines such as `protocol: v311`,
    /// `max_age_s: 60`, `persist: false`), which `extra` cannot add: a second `mqtt:` or `control:` key would be a
    /// YAML error. Each line is written two spaces in, after the section's own keys.
    package func yaml(deviceID: String, mqtt: [String] = [], control: [String] = []) -> String {
        var text = yaml(deviceID: deviceID)
        for (section, lines) in [("control:\n", control), ("mqtt:\n", mqtt)] where !lines.isEmpty {
            guard let start = text.range(of: section) else {
                preconditionFailure("yaml(deviceID:) has no \(section) section")
            }
            // The section's own keys are the indented lines after it.
            var end = start.upperBound
            while end < text.endIndex, text[end...].hasPrefix("  ") {
                end = text[end...].firstIndex(of: "\n").map { text.index(after: $0) } ?? text.endIndex
            }
            text.insert(contentsOf: lines.map { "  \($0)\n" }.joined(), at: end)
        }
        return text
    }

    /// The configuration a device reads from `yaml(deviceID:mqtt:control:)`.
    package func configuration(
        deviceID: String,
        mqtt: [String] = [],
        control: [String] = []
    ) throws(ConfigurationError) -> AgentConfiguration {
        try ConfigurationLoader.decode(
            yaml: yaml(deviceID: deviceID, mqtt: mqtt, control: control),
            source: "simulated config.yaml (\(deviceID))"
        )
    }
}
