import AgentPorts

/// The control service's own bounded queue of inbound messages. The connection supervisor offers each
/// message without waiting; past `capacity` waiting messages the newest are dropped and counted
/// (`connection.inboundDropped`), so a flood on a control topic costs commands, never the connection's
/// events or the publisher's acknowledgements.
final class ControlInbox: Sendable {
    static let defaultCapacity = 1024

    let messages: AsyncStream<InboundMessage>
    private let continuation: AsyncStream<InboundMessage>.Continuation
    private let counters: ConnectionCounters

    init(capacity: Int = ControlInbox.defaultCapacity, counters: ConnectionCounters) {
        let policy = AsyncStream<InboundMessage>.Continuation.BufferingPolicy.bufferingOldest(max(1, capacity))
        (messages, continuation) = AsyncStream<InboundMessage>.makeStream(bufferingPolicy: policy)
        self.counters = counters
    }

    func offer(_ message: InboundMessage) {
        if case .dropped = continuation.yield(message) { counters.countInboundDropped() }
    }

    func finish() { continuation.finish() }
}
