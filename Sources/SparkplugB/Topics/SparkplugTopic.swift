/// `spBv1.0/<group>/<verb>/<edge node>[/<device>]` (4.1): built here and nowhere else, and parsed from the
/// network without trusting it.
package struct SparkplugTopic: Sendable, Hashable, CustomStringConvertible {
    package static let namespace = "spBv1.0"

    package var groupID: String
    package var messageType: SparkplugMessageType
    package var edgeNodeID: String
    /// Present exactly for the device verbs.
    package var deviceID: String?

    /// The ids must be valid (`SparkplugIdentifier`); the edge node validates its configuration before it
    /// builds any topic.
    package init(groupID: String, messageType: SparkplugMessageType, edgeNodeID: String, deviceID: String? = nil) {
        precondition(
            messageType.isDeviceMessage == (deviceID != nil),
            "\(messageType.rawValue) \(messageType.isDeviceMessage ? "needs" : "takes no") device id"
        )
        self.groupID = groupID
        self.messageType = messageType
        self.edgeNodeID = edgeNodeID
        self.deviceID = deviceID
    }

    package var description: String {
        var topic = "\(Self.namespace)/\(groupID)/\(messageType.rawValue)/\(edgeNodeID)"
        if let deviceID { topic += "/\(deviceID)" }
        return topic
    }

    /// nil for anything that is not a well-formed Sparkplug B edge node or device topic (including STATE).
    package init?(parsing topic: String) {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 4 || levels.count == 5, levels[0] == Self.namespace,
            let type = SparkplugMessageType(rawValue: String(levels[2])), type.isDeviceMessage == (levels.count == 5)
        else { return nil }
        let group = String(levels[1])
        let node = String(levels[3])
        let device = levels.count == 5 ? String(levels[4]) : nil
        guard SparkplugIdentifier.isValid(group), SparkplugIdentifier.isValid(node),
            device.map(SparkplugIdentifier.isValid) ?? true
        else { return nil }
        self.init(groupID: group, messageType: type, edgeNodeID: node, deviceID: device)
    }
}
