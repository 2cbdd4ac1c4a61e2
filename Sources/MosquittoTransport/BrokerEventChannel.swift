import AgentPorts
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The client's `events` stream: connection events are never dropped; inbound messages are bounded, in count
/// and in bytes.
///
/// Inbound volume is the reason for the bounds: a subscriber to the agent's own data topics sees thousands of
/// messages a second, and anyone allowed to publish on a control topic can flood it. If the consumer stalls,
/// an unbounded stream would grow without limit; here at most `dataLimit` messages holding at most `byteLimit`
/// bytes (`InboundMessage.byteCount`) wait, later ones are dropped and counted (`drops`), and connection events
/// still get through, in order. Counting messages alone let thousands of 1 MiB messages pile up (issue 27).
/// Acknowledgements of published messages never enter this queue (they go to the client's
/// `BrokerAcknowledgementHandler`), so a flood of inbound messages cannot drop or delay them.
///
/// The queue is this type's own (one lock, one waiting consumer) behind `AsyncStream(unfolding:)`, rather than
/// a second `AsyncStream` wrapped to count what the consumer took: the inner stream's generic storage cost a
/// runtime metadata lookup, a lock and, with the consumer waiting, a thread wake-up per event.
final class BrokerEventChannel: Sendable {
    let stream: AsyncStream<BrokerEvent>
    let dataLimit: Int
    let byteLimit: Int
    private let queue: Queue

    init(dataLimit: Int, byteLimit: Int = .max) {
        self.dataLimit = dataLimit
        self.byteLimit = byteLimit
        let queue = Queue(dataLimit: dataLimit, byteLimit: byteLimit)
        self.queue = queue
        stream = AsyncStream(unfolding: { await queue.next() }, onCancel: { queue.finish() })
    }

    /// Messages dropped because the consumer was behind (either bound).
    var droppedDataEvents: Int { queue.droppedData.load(ordering: .relaxed) }

    /// Every drop so far, by cause, with the latest topics.
    var drops: InboundDrops { queue.drops }

    /// Bytes of the messages waiting (or reserved) now.
    var waitingBytes: Int { queue.waitingBytes }

    /// Connection events: always delivered.
    func yieldControl(_ event: BrokerEvent) {
        queue.push(event, isData: false)
    }

    /// Claims room for one data event of `bytes`; `false` means the consumer is `dataLimit` events or
    /// `byteLimit` bytes behind and the event must be dropped (call before copying the payload, so a dropped
    /// message costs no allocation). A message larger than `byteLimit` still gets room when nothing waits.
    /// `topic` (libmosquitto's, lent for the callback) is kept for the log when the event is dropped.
    func reserveData(bytes: Int = 0, topic: UnsafePointer<CChar>? = nil) -> Bool {
        queue.reserveData(bytes: bytes, topic: topic)
    }

    /// Yields a data event whose room `reserveData(bytes: reserved)` granted; its byte count replaces the
    /// reservation (a topic that is not UTF-8 grows when repaired).
    func yieldReservedData(_ event: BrokerEvent, reserved: Int = 0) {
        queue.push(event, isData: true, reserved: reserved)
    }

    /// Counts a message larger than the connection accepts, dropped before it was copied.
    func countOversize(bytes: Int, topic: UnsafePointer<CChar>?) {
        queue.countOversize(bytes: bytes, topic: topic)
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
            /// Data events queued or reserved and not yet taken by the consumer, and the bytes they hold.
            var waitingData = 0
            var waitingBytes = 0
            var consumer: UnsafeContinuation<BrokerEvent?, Never>?
            var finished = false
            var drops = InboundDrops()

            /// The next event for the consumer, or nil when there is none yet.
            mutating func take() -> BrokerEvent? {
                guard let event = events.popFirst() else { return nil }
                if case .message(let message) = event {
                    waitingData -= 1
                    waitingBytes -= message.byteCount
                }
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
        let byteLimit: Int
        let droppedData = Atomic<Int>(0)
        private let state = Mutex(State())

        init(dataLimit: Int, byteLimit: Int) {
            self.dataLimit = dataLimit
            self.byteLimit = byteLimit
        }

        var drops: InboundDrops { state.withLock { $0.drops } }
        var waitingBytes: Int { state.withLock { $0.waitingBytes } }

        func reserveData(bytes: Int, topic: UnsafePointer<CChar>?) -> Bool {
            let granted = state.withLock { state in
                let overBudget = state.waitingBytes > 0 && bytes > byteLimit - state.waitingBytes
                guard state.waitingData < dataLimit, !overBudget else {
                    state.drops.behind += 1
                    if overBudget && state.waitingData < dataLimit { state.drops.overBudget += 1 }
                    Self.remember(topic, in: &state.drops.lastBehindTopic)
                    return false
                }
                state.waitingData += 1
                state.waitingBytes += bytes
                return true
            }
            if !granted { droppedData.add(1, ordering: .relaxed) }
            return granted
        }

        func countOversize(bytes: Int, topic: UnsafePointer<CChar>?) {
            state.withLock { state in
                state.drops.oversize += 1
                state.drops.largestOversizeBytes = max(state.drops.largestOversizeBytes, bytes)
                Self.remember(topic, in: &state.drops.lastOversizeTopic)
            }
        }

        /// Keeps a copy of `topic` unless it is the one kept already: a flood on one topic copies it once.
        private static func remember(_ topic: UnsafePointer<CChar>?, in kept: inout String?) {
            guard let topic else { return }
            // A native string's C form is its own storage: the comparison allocates nothing.
            if let current = kept, current.withCString({ strcmp($0, topic) }) == 0 { return }
            kept = String(cString: topic)
        }

        /// Queues `event` (a data event's room already reserved, `reserved` bytes of it) and wakes a waiting
        /// consumer.
        func push(_ event: BrokerEvent, isData: Bool, reserved: Int = 0) {
            let handOff = state.withLock { state -> (UnsafeContinuation<BrokerEvent?, Never>, BrokerEvent)? in
                let bytes = if case .message(let message) = event { message.byteCount } else { 0 }
                guard !state.finished else {
                    if isData {
                        state.waitingData -= 1
                        state.waitingBytes -= reserved
                    }
                    return nil
                }
                if isData { state.waitingBytes += bytes - reserved }
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
