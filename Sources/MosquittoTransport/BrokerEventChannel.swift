import AgentPorts
import Synchronization

/// The client's `events` stream: connection events are never dropped; inbound messages are bounded.
///
/// Inbound volume is the reason for the bound: a subscriber to the agent's own data topics sees thousands of
/// messages a second, and anyone allowed to publish on a control topic can flood it. If the consumer stalls,
/// an unbounded stream would grow without limit; here at most `dataLimit` messages wait, later ones are
/// dropped and counted (`droppedDataEvents`), and connection events still get through, in order.
/// Acknowledgements of published messages never enter this queue (they go to the client's
/// `BrokerAcknowledgementHandler`), so a flood of inbound messages cannot drop or delay them.
///
/// The queue is this type's own (one lock, one waiting consumer) behind `AsyncStream(unfolding:)`, rather than
/// a second `AsyncStream` wrapped to count what the consumer took: the inner stream's generic storage cost a
/// runtime metadata lookup, a lock and, with the consumer waiting, a thread wake-up per event.
final class BrokerEventChannel: Sendable {
    let stream: AsyncStream<BrokerEvent>
    let dataLimit: Int
    private let queue: Queue

    init(dataLimit: Int) {
        self.dataLimit = dataLimit
        let queue = Queue(dataLimit: dataLimit)
        self.queue = queue
        stream = AsyncStream(unfolding: { await queue.next() }, onCancel: { queue.finish() })
    }

    var droppedDataEvents: Int { queue.droppedData.load(ordering: .relaxed) }

    /// Connection events: always delivered.
    func yieldControl(_ event: BrokerEvent) {
        queue.push(event, isData: false)
    }

    /// Claims room for one data event; `false` means the consumer is `dataLimit` events behind and the
    /// event must be dropped (call before building the event, so a dropped message costs no allocation).
    func reserveData() -> Bool {
        queue.reserveData()
    }

    /// Yields a data event whose room `reserveData()` granted.
    func yieldReservedData(_ event: BrokerEvent) {
        queue.push(event, isData: true)
    }

    func finish() {
        queue.finish()
    }
}

extension BrokerEventChannel {
    /// The events not yet taken, and the one consumer suspended waiting for the next.
    final class Queue: Sendable {
        private struct State {
            var events = EventRing()
            /// Data events queued or reserved and not yet taken by the consumer.
            var waitingData = 0
            var consumer: UnsafeContinuation<BrokerEvent?, Never>?
            var finished = false

            /// The next event for the consumer, or nil when there is none yet.
            mutating func take() -> BrokerEvent? {
                guard let event = events.popFirst() else { return nil }
                if event.isData { waitingData -= 1 }
                return event
            }

            /// When the consumer is waiting and an event is queued: both, for resuming outside the lock.
            mutating func handOff() -> (UnsafeContinuation<BrokerEvent?, Never>, BrokerEvent)? {
                guard let consumer, let event = take() else { return nil }
                self.consumer = nil
                return (consumer, event)
            }
        }

        let dataLimit: Int
        let droppedData = Atomic<Int>(0)
        private let state = Mutex(State())

        init(dataLimit: Int) {
            self.dataLimit = dataLimit
        }

        func reserveData() -> Bool {
            let granted = state.withLock { state in
                guard state.waitingData < dataLimit else { return false }
                state.waitingData += 1
                return true
            }
            if !granted { droppedData.add(1, ordering: .relaxed) }
            return granted
        }

        /// Queues `event` (a data event's room already reserved) and wakes a waiting consumer.
        func push(_ event: BrokerEvent, isData: Bool) {
            let handOff = state.withLock { state -> (UnsafeContinuation<BrokerEvent?, Never>, BrokerEvent)? in
                guard !state.finished else {
                    if isData { state.waitingData -= 1 }
                    return nil
                }
                state.events.append(event)
                return state.handOff()
            }
            if let (consumer, event) = handOff { consumer.resume(returning: event) }
        }

        /// The consumer's side: the oldest event, waiting for one if none is queued; nil once finished and
        /// drained.
        func next() async -> BrokerEvent? {
            enum Immediate {
                case event(BrokerEvent)
                case end
            }
            let immediate = state.withLock { state -> Immediate? in
                if let event = state.take() { return .event(event) }
                return state.finished ? .end : nil
            }
            switch immediate {
            case .event(let event): return event
            case .end: return nil
            case nil: break
            }
            return await withUnsafeContinuation { continuation in
                let now = state.withLock { state -> Immediate? in
                    if let event = state.take() { return .event(event) }
                    if state.finished { return .end }
                    // AsyncStream traps when two tasks await next() at once; so does this.
                    precondition(state.consumer == nil, "two tasks iterate one MosquittoClient.events at once")
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

        /// Ends the stream: queued events are still taken, then `next` returns nil; later pushes are ignored.
        func finish() {
            let consumer = state.withLock { state -> UnsafeContinuation<BrokerEvent?, Never>? in
                state.finished = true
                defer { state.consumer = nil }
                // A waiting consumer has nothing queued (it would have taken it), so it gets the end.
                return state.consumer
            }
            consumer?.resume(returning: nil)
        }
    }
}

extension BrokerEvent {
    var isData: Bool {
        switch self {
        case .message: true
        case .connected, .connectFailed, .serverReference, .disconnected: false
        }
    }
}
