import AgentPorts
import Synchronization

/// The control service's own bounded queue of inbound messages. The connection supervisor offers each
/// message without waiting; past `capacity` waiting messages, or `byteBudget` bytes of them
/// (`InboundMessage.byteCount`), the newest are dropped and counted (`connection.inboundDropped`, and
/// `connection.inboundOverBudget` for the byte budget), so a flood on a control topic costs commands, never the
/// connection's events, the publisher's acknowledgements or the agent's memory.
final class ControlInbox: Sendable {
    static let defaultCapacity = 1024

    private let stream: AsyncStream<InboundMessage>
    private let continuation: AsyncStream<InboundMessage>.Continuation
    private let counters: ConnectionCounters
    let byteBudget: Int
    /// Bytes of the messages offered and not yet taken.
    private let waiting = Mutex(0)
    /// Messages offered, taken or dropped: whether any arrived lately.
    private let offers = Atomic<UInt64>(0)

    init(
        capacity: Int = ControlInbox.defaultCapacity,
        byteBudget: Int = InboundLimits.inboxBytes,
        counters: ConnectionCounters
    ) {
        let policy = AsyncStream<InboundMessage>.Continuation.BufferingPolicy.bufferingOldest(max(1, capacity))
        (stream, continuation) = AsyncStream<InboundMessage>.makeStream(bufferingPolicy: policy)
        self.counters = counters
        self.byteBudget = max(1, byteBudget)
    }

    /// The messages, oldest first, for one consumer; each one's bytes leave the budget as it is taken.
    var messages: AsyncMapSequence<AsyncStream<InboundMessage>, InboundMessage> {
        stream.map { [self] message in
            let bytes = message.byteCount
            waiting.withLock { $0 -= bytes }
            return message
        }
    }

    /// Bytes waiting now.
    var waitingBytes: Int { waiting.withLock { $0 } }

    /// Every message offered so far, taken or dropped.
    var offered: UInt64 { offers.load(ordering: .relaxed) }

    func offer(_ message: InboundMessage) {
        offers.add(1, ordering: .relaxed)
        let bytes = message.byteCount
        // One message larger than the whole budget still passes when nothing waits (the client's maximum
        // packet size bounds it); otherwise the budget holds.
        let admitted = waiting.withLock { waiting -> Bool in
            guard waiting == 0 || bytes <= byteBudget - waiting else { return false }
            waiting += bytes
            return true
        }
        guard admitted else {
            counters.countInboundDropped(topic: message.topic, overBudget: true)
            return
        }
        switch continuation.yield(message) {
        case .enqueued: break
        case .dropped:
            waiting.withLock { $0 -= bytes }
            counters.countInboundDropped(topic: message.topic, overBudget: false)
        case .terminated:
            waiting.withLock { $0 -= bytes }
        @unknown default:
            break
        }
    }

    func finish() { continuation.finish() }
}
