import AgentPorts
import Logging
import MotionWire

/// The log's account of inbound drops: one line per cause for each interval in which messages were dropped,
/// and one when the drops have stopped — never one per message (a flood drops thousands a second). Pure: it
/// compares two readings of the counters.
struct InboundDropReport: Sendable {
    /// The agent's maximum packet size, bytes, named in the oversize line.
    let maximumPacketSize: Int
    /// The inbound queues' byte budget, bytes, named in the flood line.
    let queueBytes: Int
    private var previous = InboundDrops()
    /// Whether the last interval dropped something (so a quiet one ends the episode).
    private var dropping = false

    init(maximumPacketSize: Int, queueBytes: Int) {
        self.maximumPacketSize = maximumPacketSize
        self.queueBytes = queueBytes
    }

    /// The lines for the interval of `seconds` that ended with the counters at `current`.
    mutating func lines(after current: InboundDrops, seconds: Int) -> [(Logger.Level, String)] {
        defer { previous = current }
        var lines: [(Logger.Level, String)] = []
        let oversize = current.oversize - previous.oversize
        if oversize > 0 {
            lines.append(
                (
                    .warning,
                    "dropped \(oversize) inbound message\(oversize == 1 ? "" : "s") larger than the \(maximumPacketSize) bytes this agent accepts in the last \(seconds) s, before copying \(oversize == 1 ? "it" : "them") (largest so far \(current.largestOversizeBytes) bytes, latest on \(Self.quoted(current.lastOversizeTopic))) — the broker ignores the MQTT 5 Maximum Packet Size the agent sends, or the connection is MQTT 3.1.1: set max_packet_size in the broker's mosquitto.conf (Deploy/mosquitto/mosquitto.conf sets 1100000), and find who publishes there"
                )
            )
        }
        let behind = current.behind - previous.behind
        if behind > 0 {
            let overBudget = current.overBudget - previous.overBudget
            let budget =
                overBudget > 0
                ? ", \(overBudget) of them because \(queueBytes) bytes of inbound messages were already waiting" : ""
            lines.append(
                (
                    .warning,
                    "dropped \(behind) inbound message\(behind == 1 ? "" : "s") in the last \(seconds) s because the control door could not keep up\(budget) (latest on \(Self.quoted(current.lastBehindTopic))) — a flood on a topic this agent listens to: find who publishes there (the broker's ACL decides who may); the desired-state topics are subscribed again once it stops"
                )
            )
        }
        let dropped = oversize > 0 || behind > 0
        if !dropped && dropping {
            lines.append(
                (
                    .notice,
                    "inbound messages are no longer dropped (since the agent started: \(current.behind) behind, \(current.oversize) too large)"
                )
            )
        }
        dropping = dropped
        return lines
    }

    private static func quoted(_ topic: String?) -> String {
        topic.map { "\"\(Printable.text($0))\"" } ?? "an unknown topic"
    }
}
