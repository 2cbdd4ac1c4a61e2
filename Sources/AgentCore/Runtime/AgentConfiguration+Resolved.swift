import AgentConfig

// Interim until the AgentConfig branch lands with its own resolvers (then this file goes).
extension AgentConfiguration {
    var resolvedTopicRoot: String { topics.root.replacingOccurrences(of: "{device}", with: device.id) }
    var resolvedClientID: String { mqtt.clientID.replacingOccurrences(of: "{device}", with: device.id) }
}
