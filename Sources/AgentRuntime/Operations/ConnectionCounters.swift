import AgentControl
import AgentPipeline
import Integrations
import MotionWire
import Synchronization

/// Connections made and failed, and inbound messages dropped, counted by the connection supervisor and the
/// control service and read by the metrics report.
final class ConnectionCounters: Sendable {
    private let connects = Atomic<UInt64>(0)
    private let failures = Atomic<UInt64>(0)
    private let inboxDropped = Atomic<UInt64>(0)
    private let currentLink = Mutex<BrokerLink?>(nil)
    private let droppedByClient: @Sendable () -> Int

    /// - Parameter droppedByClient: inbound messages the broker client itself dropped (its own bound).
    init(droppedByClient: @escaping @Sendable () -> Int = { 0 }) {
        self.droppedByClient = droppedByClient
    }

    /// A CONNACK was received.
    func connected() { connects.add(1, ordering: .relaxed) }
    /// A connection attempt failed (refused, unreachable, timed out).
    func connectFailed() { failures.add(1, ordering: .relaxed) }
    /// The connection supervisor chose the server (and protocol) of the next attempt.
    func use(_ link: BrokerLink) { currentLink.withLock { $0 = link } }
    /// The control service's inbox was full and dropped an inbound message.
    func countInboundDropped() { inboxDropped.add(1, ordering: .relaxed) }

    /// Connections after the first: each one follows a loss.
    var reconnects: UInt64 { max(connects.load(ordering: .relaxed), 1) - 1 }
    var connectionFailures: UInt64 { failures.load(ordering: .relaxed) }
    /// The server in use and the failovers so far; nil before the first attempt.
    var link: BrokerLink? { currentLink.withLock { $0 } }
    /// Inbound messages (commands, or a flood on a control topic) dropped before the control door saw them:
    /// by the broker client's bound or the control inbox's. Acknowledgements are never among them.
    var inboundDropped: UInt64 {
        inboxDropped.load(ordering: .relaxed) + UInt64(max(0, droppedByClient()))
    }
}
