import AgentControl
import AgentPipeline
import AgentPorts
import Integrations
import MotionWire
import Synchronization

/// Connections made and failed, and inbound messages dropped, counted by the connection supervisor and the
/// control service and read by the metrics report.
final class ConnectionCounters: Sendable {
    private let connects = Atomic<UInt64>(0)
    private let failures = Atomic<UInt64>(0)
    private let currentLink = Mutex<BrokerLink?>(nil)
    /// The control inbox's drops: `behind` and `overBudget` only (the client drops oversize messages itself).
    private let inboxDrops = Mutex(InboundDrops())
    private let droppedByClient: @Sendable () -> InboundDrops

    /// - Parameter droppedByClient: inbound messages the broker client itself dropped (its own bounds, and
    ///   messages larger than the connection's maximum packet size).
    init(droppedByClient: @escaping @Sendable () -> InboundDrops = { InboundDrops() }) {
        self.droppedByClient = droppedByClient
    }

    /// A CONNACK was received.
    func connected() { connects.add(1, ordering: .relaxed) }
    /// A connection attempt failed (refused, unreachable, timed out).
    func connectFailed() { failures.add(1, ordering: .relaxed) }
    /// The connection supervisor chose the server (and protocol) of the next attempt.
    func use(_ link: BrokerLink) { currentLink.withLock { $0 = link } }
    /// The control service's inbox was full (`overBudget`: of bytes) and dropped a message on `topic`.
    func countInboundDropped(topic: String, overBudget: Bool = false) {
        inboxDrops.withLock { drops in
            drops.behind += 1
            if overBudget { drops.overBudget += 1 }
            drops.lastBehindTopic = topic
        }
    }

    /// Connections after the first: each one follows a loss.
    var reconnects: UInt64 { max(connects.load(ordering: .relaxed), 1) - 1 }
    var connectionFailures: UInt64 { failures.load(ordering: .relaxed) }
    /// The server in use and the failovers so far; nil before the first attempt.
    var link: BrokerLink? { currentLink.withLock { $0 } }

    /// Every inbound message dropped before the control door saw it, by the broker client and the control
    /// inbox together; a topic of the inbox's is the newer one.
    var drops: InboundDrops {
        let client = droppedByClient()
        let inbox = inboxDrops.withLock { $0 }
        return InboundDrops(
            behind: client.behind + inbox.behind,
            overBudget: client.overBudget + inbox.overBudget,
            oversize: client.oversize,
            largestOversizeBytes: client.largestOversizeBytes,
            lastBehindTopic: inbox.lastBehindTopic ?? client.lastBehindTopic,
            lastOversizeTopic: client.lastOversizeTopic
        )
    }

    /// Inbound messages (commands, or a flood on a control topic) dropped before the control door saw them
    /// because the agent was behind: by the broker client's bounds or the control inbox's, in messages or in
    /// bytes. Acknowledgements are never among them; messages too large to take are counted apart
    /// (`inboundOversize`).
    var inboundDropped: UInt64 { UInt64(max(0, drops.behind)) }
    /// Of `inboundDropped`, those refused by a byte budget.
    var inboundOverBudget: UInt64 { UInt64(max(0, drops.overBudget)) }
    /// Inbound messages larger than the agent's maximum packet size, dropped uncopied.
    var inboundOversize: UInt64 { UInt64(max(0, drops.oversize)) }
}
