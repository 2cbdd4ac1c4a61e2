/// The edge node's message sequence number (6.4.1: 0 in every NBIRTH, then one more per message the node
/// publishes, 255 followed by 0; none in NDEATH). Assigned when a message is handed to MQTT, not when it is
/// built: a message built and then dropped (a full outbox, a session that ended) must not leave a gap.
package struct SparkplugSequence: Sendable, Equatable {
    /// The number the last stamped message carried; nil before the first NBIRTH.
    package private(set) var last: UInt8?

    package init() {}

    /// The `seq` for the next message of `type`, or nil for the verbs that carry none. An NBIRTH restarts at 0;
    /// anything else before the first NBIRTH is a caller's error (data before birth) and also gets nil.
    package mutating func next(for type: SparkplugMessageType) -> UInt8? {
        switch type {
        case .nodeBirth:
            last = 0
            return 0
        case .nodeDeath, .nodeCommand, .deviceCommand:
            return nil
        case .nodeData, .deviceBirth, .deviceDeath, .deviceData:
            guard let previous = last else { return nil }
            last = previous &+ 1
            return last
        }
    }
}
