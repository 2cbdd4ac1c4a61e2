import AgentPorts

/// What a turn of the network hands to the clients, delivered after the network's lock is released: events into
/// each client's `events` (in the order they happened), then each client's acknowledgements in one batch, then the
/// `disconnect` callers woken. Nothing here runs while the lock is held, so a handler that takes its own lock (the
/// outbox publisher, which holds it across `publish`) cannot deadlock against the network.
struct PumpEffects: Sendable {
    var events: [(client: Int, event: BrokerEvent)] = []
    var acknowledgements: [Int: [Int32]] = [:]
    var waiters: [CheckedContinuation<Void, Never>] = []
    var finished: [Int] = []
    var deliveries: [(observer: @Sendable (MemoryBroker.Delivery) -> Void, delivery: MemoryBroker.Delivery)] = []
    var publications:
        [(observer: @Sendable (MemoryBroker.Publication) -> Void, publication: MemoryBroker.Publication)] = []

    var isEmpty: Bool {
        events.isEmpty && acknowledgements.isEmpty && waiters.isEmpty && finished.isEmpty && deliveries.isEmpty
            && publications.isEmpty
    }
}
