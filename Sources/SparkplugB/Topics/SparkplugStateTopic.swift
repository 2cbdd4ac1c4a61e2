/// `spBv1.0/STATE/<host id>` (Sparkplug 3.0, 4.2.3): where a host application publishes its retained birth
/// (`online: true`) and will (`online: false`).
package struct SparkplugStateTopic: Sendable, Hashable, CustomStringConvertible {
    package var hostID: String

    package init(hostID: String) { self.hostID = hostID }

    package var description: String { "\(SparkplugTopic.namespace)/STATE/\(hostID)" }

    package init?(parsing topic: String) {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 3, levels[0] == SparkplugTopic.namespace, levels[1] == "STATE",
            SparkplugIdentifier.isValid(String(levels[2]))
        else { return nil }
        hostID = String(levels[2])
    }
}
