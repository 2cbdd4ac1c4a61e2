import AgentControl
import AgentPorts

/// How many bytes the agent takes from the broker: the largest packet, and what may wait between libmosquitto's
/// callback and the control door. Commands and desired documents are the only messages the agent subscribes to,
/// and both are small (`control.max_payload_bytes`, at most 64 KiB; `DesiredDocumentOpener.maximumBytes`,
/// 64 KiB), so a flood of large messages must cost neither memory nor the connection (issue 27: one 16 MiB
/// message on a control topic lifted the peak RSS from 21 to 70 MB; thousands of 1 MiB messages fitted in the
/// queues, which were bounded in messages only).
///
/// The bound on what inbound traffic adds to the agent's memory is then, by design:
/// 2 × `maximumPacketSize` (libmosquitto reads a packet whole, then copies its payload for the callback) +
/// `clientQueueBytes` + `inboxBytes` + one message in the control door. On MQTT 3.1.1, which has no Maximum
/// Packet Size, the first term is 2 × the broker's `max_packet_size` instead (the shipped mosquitto.conf sets
/// 1100000): libmosquitto has no inbound limit of its own, and the agent can only refuse to copy what it read.
package enum InboundLimits {
    /// What the broker client's event queue may hold, bytes (`MosquittoClient(eventBacklogBytes:)`): 32 of the
    /// largest desired documents. The connection supervisor moves messages on to the control inbox at once,
    /// so this fills only while that task waits for a thread.
    package static let clientQueueBytes = 2 << 20
    /// What the control inbox may hold, bytes: commands and documents waiting for the control door.
    package static let inboxBytes = 2 << 20
    /// Room for a PUBLISH's MQTT 5 properties beside its topic and payload: the operators' tools send a response
    /// topic (`motion-ctl/<operator>/reply`) and the command's id as correlation data; a broker may add a
    /// subscription identifier or an expiry, a publisher user properties.
    package static let propertyAllowance = 4096
    /// A PUBLISH's fixed header (1 + up to 4 bytes of Remaining Length), the topic's length (2), the packet id (2)
    /// and the properties' length (up to 4).
    static let headerBytes = 13

    /// The largest packet the agent accepts, bytes: sent in CONNECT as the MQTT 5 Maximum Packet Size, and the
    /// size past which an inbound message is dropped uncopied. The largest payload the control door accepts on
    /// the longest topic the agent subscribes to, with headers and properties.
    package static func maximumPacketSize(subscriptions: [String], maxCommandBytes: Int) -> Int {
        let longestTopic = subscriptions.map(\.utf8.count).max() ?? 0
        let payload = max(maxCommandBytes, DesiredDocumentOpener.maximumBytes)
        return headerBytes + longestTopic + propertyAllowance + payload
    }
}
