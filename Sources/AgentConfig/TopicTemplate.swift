import AgentPorts

/// The `{device}` templates of `topics.root` and `mqtt.client_id`, checked against the MQTT rules of
/// `TopicScheme` (the one place those rules live), with the problems worded for config.yaml.
enum TopicTemplate {
    static let devicePlaceholder = TopicScheme.devicePlaceholder

    static func substitute(_ template: String, device: String) -> String {
        TopicScheme.substitute(template, device: device)
    }

    /// The problem with a `topics.root` template, if any.
    static func checkRoot(_ root: String) -> FieldProblem? {
        if root.isEmpty { return FieldProblem(kind: .invalidValue, problem: "is empty") }
        if let problem = checkPlaceholders(root) { return problem }
        return checkTopic(root)
    }

    /// The problem with `control.fleet_topic`, if any: a topic name, the same for every device.
    static func checkFleetTopic(_ topic: String) -> FieldProblem? {
        if topic.contains(devicePlaceholder) {
            return FieldProblem(
                kind: .invalidValue,
                problem: "contains {device}, which is not replaced here: every device shares the fleet topic "
                    + "(each device's own commands go to {root}/control)"
            )
        }
        return checkTopic(topic)
    }

    /// The problem with a topic name to publish or subscribe literally, if any.
    static func checkTopic(_ topic: String) -> FieldProblem? {
        TopicScheme.configuredProblem(topic).map { FieldProblem(kind: .invalidValue, problem: $0) }
    }

    /// The problem with `device.id`, if any: it becomes one topic level.
    static func checkDeviceID(_ id: String) -> FieldProblem? {
        if let problem = checkLevel(id) { return problem }
        if id.contains("{") || id.contains("}") {
            return FieldProblem(kind: .invalidValue, problem: "contains { or }, which would read as a placeholder")
        }
        return nil
    }

    /// The problem with a name that becomes exactly one topic level (a device id, a control group), if any.
    static func checkLevel(_ name: String) -> FieldProblem? {
        TopicScheme.levelProblem(name).map { FieldProblem(kind: .invalidValue, problem: $0) }
    }

    /// The problem with an `mqtt.client_id` template, if any.
    static func checkClientID(_ template: String) -> FieldProblem? {
        // An empty client id asks the broker to assign one, which MQTT 3.1.1 refuses for persistent
        // sessions and which would make the agent a different client on every connect.
        if template.isEmpty { return FieldProblem(kind: .invalidValue, problem: "is empty") }
        if let problem = checkPlaceholders(template) { return problem }
        return checkEncoding(template)
    }

    private static func checkPlaceholders(_ template: String) -> FieldProblem? {
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                return FieldProblem(kind: .invalidValue, problem: "has a { without a closing }")
            }
            let placeholder = String(rest[open...close])
            if placeholder != devicePlaceholder {
                return FieldProblem(
                    kind: .invalidValue,
                    problem: "has the unknown placeholder \(placeholder)",
                    suggestion: EditDistance.closest(to: String(placeholder.dropFirst().dropLast()), among: ["device"])
                        .map { "{\($0)}" }
                )
            }
            rest = rest[rest.index(after: close)...]
        }
        if rest.contains("}") { return FieldProblem(kind: .invalidValue, problem: "has a } without an opening {") }
        return nil
    }

    private static func checkEncoding(_ text: String) -> FieldProblem? {
        TopicScheme.encodingProblem(text).map { FieldProblem(kind: .invalidValue, problem: $0) }
    }
}
