import AgentPorts

/// A client as the network holds it: libmosquitto's handle (its session options, message ids and the QoS > 0
/// messages not yet acknowledged, resent on the next connection) and the connection attempt under way.
struct ClientState: Sendable {
    enum Phase {
        case idle
        case connecting
        case connected
    }

    /// A QoS > 0 message the client published and the broker has not acknowledged.
    struct Outbound {
        var packet: PublishPacket
        /// Sent on the current connection (and counted in its window).
        var sent: Bool
    }

    let queue: MemoryEventQueue
    /// Weak: the handler (the agent's publisher) owns the client.
    weak var handler: (any BrokerAcknowledgementHandler)?
    let maxQueuedMessages: Int
    /// PUBLISH packets the client reads from its wire per pump (a slow consumer reads few).
    var readsPerPump: Int
    var phase = Phase.idle
    var connection: Int?
    /// The options the handle was made with: a connect with the same session options keeps the messages in flight.
    var handleOptions: BrokerConnectOptions?
    var outbound: [Outbound] = []
    /// QoS > 0 messages sent on this connection and not acknowledged: bounded by `window`.
    var sentCount = 0
    var window = 1
    /// QoS 0 messages on the wire that have not left the client yet (libmosquitto's unwritten queue).
    var unwrittenQoS0 = 0
    var lastMessageID: UInt16 = 0
    /// `disconnect` asked to flush until this time, then DISCONNECT.
    var stopDeadline: Double?
    var waiters: [CheckedContinuation<Void, Never>] = []
    /// The process holding the client died: nothing it does reaches a broker any more.
    var killed = false

    init(queue: MemoryEventQueue, maxQueuedMessages: Int, readsPerPump: Int) {
        self.queue = queue
        self.maxQueuedMessages = maxQueuedMessages
        self.readsPerPump = readsPerPump
    }

    mutating func nextMessageID() -> Int32 {
        lastMessageID &+= 1
        if lastMessageID == 0 { lastMessageID = 1 }
        return Int32(lastMessageID)
    }

    var queuedMessageCount: Int { outbound.count + unwrittenQoS0 }
}
