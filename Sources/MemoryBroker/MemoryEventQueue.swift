import AgentPorts
import Synchronization

/// A client's `events`, bounded as MosquittoTransport's channel is: connection events always get through; at most
/// `dataLimit` inbound messages holding at most `byteLimit` bytes (`InboundMessage.byteCount`) wait for the consumer,
/// later ones are dropped and counted; one message larger than the byte budget still passes when none waits.
/// One consumer at a time, as with `AsyncStream`.
final class MemoryEventQueue: Sendable {
    let dataLimit: Int
    let byteLimit: Int
    private let state = Mutex(State())

    private struct State {
        var events: [BrokerEvent] = []
        var head = 0
        var waitingData = 0
        var waitingBytes = 0
        var consumer: UnsafeContinuation<BrokerEvent?, Never>?
        var finished = false
        var drops = InboundDrops()

        mutating func take() -> BrokerEvent? {
            guard head < events.count else { return nil }
            let event = events[head]
            head += 1
            if head == events.count {
                events.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 && head * 2 >= events.count {
                events.removeFirst(head)
                head = 0
            }
            if case .message(let message) = event {
                waitingData -= 1
                waitingBytes -= message.byteCount
            }
            return event
        }
    }

    init(dataLimit: Int, byteLimit: Int) {
        self.dataLimit = dataLimit
        self.byteLimit = byteLimit
    }

    /// The consumer's stream (made once by the client, which keeps it: the queue does not hold its own stream).
    func makeStream() -> AsyncStream<BrokerEvent> {
        AsyncStream(unfolding: { await self.next() }, onCancel: { self.finish() })
    }

    var drops: InboundDrops { state.withLock { $0.drops } }

    /// Connection events: never dropped.
    func pushControl(_ event: BrokerEvent) {
        push(event)
    }

    /// Offers an inbound message; false (and counted) when the consumer is too far behind.
    @discardableResult
    func offer(_ message: InboundMessage) -> Bool {
        let bytes = message.byteCount
        let granted = state.withLock { state -> Bool in
            let overBudget = state.waitingBytes > 0 && bytes > byteLimit - state.waitingBytes
            guard state.waitingData < dataLimit, !overBudget else {
                state.drops.behind += 1
                if overBudget && state.waitingData < dataLimit { state.drops.overBudget += 1 }
                state.drops.lastBehindTopic = message.topic
                return false
            }
            return true
        }
        if granted { push(.message(message)) }
        return granted
    }

    /// A message larger than the connection's maximum packet size, dropped before it was copied.
    func countOversize(payloadBytes: Int, topic: String) {
        state.withLock { state in
            state.drops.oversize += 1
            state.drops.largestOversizeBytes = max(state.drops.largestOversizeBytes, payloadBytes)
            state.drops.lastOversizeTopic = topic
        }
    }

    private func push(_ event: BrokerEvent) {
        let handOff = state.withLock { state -> (UnsafeContinuation<BrokerEvent?, Never>, BrokerEvent)? in
            guard !state.finished else { return nil }
            if case .message(let message) = event {
                state.waitingData += 1
                state.waitingBytes += message.byteCount
            }
            state.events.append(event)
            guard let consumer = state.consumer, let next = state.take() else { return nil }
            state.consumer = nil
            return (consumer, next)
        }
        if let (consumer, next) = handOff { consumer.resume(returning: next) }
    }

    private func next() async -> BrokerEvent? {
        enum Immediate {
            case event(BrokerEvent)
            case end
        }
        return await withUnsafeContinuation { continuation in
            let now = state.withLock { state -> Immediate? in
                if let event = state.take() { return .event(event) }
                if state.finished { return .end }
                precondition(state.consumer == nil, "two tasks iterate one MemoryBrokerClient.events at once")
                state.consumer = continuation
                return nil
            }
            switch now {
            case .event(let event): continuation.resume(returning: event)
            case .end: continuation.resume(returning: nil)
            case nil: break
            }
        }
    }

    /// Takes every event waiting (for a test that reads events without iterating the stream).
    func drain() -> [BrokerEvent] {
        state.withLock { state in
            var taken: [BrokerEvent] = []
            while let event = state.take() { taken.append(event) }
            return taken
        }
    }

    /// Ends the stream: what is queued is still taken, then the stream ends; later pushes are ignored.
    func finish() {
        let consumer = state.withLock { state -> UnsafeContinuation<BrokerEvent?, Never>? in
            state.finished = true
            defer { state.consumer = nil }
            return state.consumer
        }
        consumer?.resume(returning: nil)
    }
}
