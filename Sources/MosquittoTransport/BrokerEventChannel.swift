import AgentCore
import Synchronization

/// The client's `events` stream: connection events are never dropped; data events (inbound messages and
/// `.delivered`) are bounded.
///
/// Inbound volume is the reason for the bound: a subscriber to the agent's own data topics sees thousands of
/// messages a second, and QoS 1 publishing produces one `.delivered` per message (22–30 k/s measured on
/// libmosquitto 2.0.11). If the consumer stalls, an unbounded stream would grow without limit; here at most
/// `dataLimit` data events wait, later ones are dropped and counted (`droppedDataEvents`), and connection
/// events still get through, in order. The count of waiting data events is kept by wrapping the stream:
/// the producer adds one per data event yielded, the consumer subtracts one per data event taken.
final class BrokerEventChannel: Sendable {
    let stream: AsyncStream<BrokerEvent>
    let dataLimit: Int
    private let continuation: AsyncStream<BrokerEvent>.Continuation
    private let counters: Counters

    final class Counters: Sendable {
        let waitingData = Atomic<Int>(0)
        let droppedData = Atomic<Int>(0)
    }

    /// The inner stream's iterator, advanced only by the single consumer of `stream` (AsyncStream traps
    /// when two tasks await `next()` at once, and so does this).
    private final class IteratorBox: @unchecked Sendable {
        var iterator: AsyncStream<BrokerEvent>.Iterator
        init(_ iterator: AsyncStream<BrokerEvent>.Iterator) { self.iterator = iterator }
        func next() async -> BrokerEvent? { await iterator.next(isolation: nil) }
    }

    init(dataLimit: Int) {
        self.dataLimit = dataLimit
        let (inner, continuation) = AsyncStream.makeStream(of: BrokerEvent.self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        let counters = Counters()
        self.counters = counters
        let box = IteratorBox(inner.makeAsyncIterator())
        stream = AsyncStream(unfolding: {
            let event = await box.next()
            if let event, event.isData {
                counters.waitingData.subtract(1, ordering: .relaxed)
            }
            return event
        })
    }

    var droppedDataEvents: Int { counters.droppedData.load(ordering: .relaxed) }

    /// Connection events: always delivered.
    func yieldControl(_ event: BrokerEvent) {
        continuation.yield(event)
    }

    /// Claims room for one data event; `false` means the consumer is `dataLimit` events behind and the
    /// event must be dropped (call before building the event, so a dropped message costs no allocation).
    func reserveData() -> Bool {
        let waiting = counters.waitingData.add(1, ordering: .relaxed).newValue
        if waiting > dataLimit {
            counters.waitingData.subtract(1, ordering: .relaxed)
            counters.droppedData.add(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Yields a data event whose room `reserveData()` granted.
    func yieldReservedData(_ event: BrokerEvent) {
        if case .terminated = continuation.yield(event) {
            counters.waitingData.subtract(1, ordering: .relaxed)
        }
    }

    func finish() {
        continuation.finish()
    }
}

extension BrokerEvent {
    var isData: Bool {
        switch self {
        case .message, .delivered: true
        case .connected, .connectFailed, .disconnected: false
        }
    }
}
