/// One broker of the network: its configuration, whether it runs, its retained store and its sessions.
struct BrokerState: Sendable {
    let name: String
    let options: MemoryBroker.Options
    var running = true
    /// topic → message. Iterated in topic order where order matters (`retainedTopics`), never in hash order.
    var retained: [String: StoredMessage] = [:]
    /// In creation order: messages are routed to sessions in this order.
    var sessions: [BrokerSession] = []
    var drops: [String: MemoryBroker.Drops] = [:]
    var generatedIDs = 0
    var observer: (@Sendable (MemoryBroker.Delivery) -> Void)?
    var publishObserver: (@Sendable (MemoryBroker.Publication) -> Void)?

    init(name: String, options: MemoryBroker.Options) {
        self.name = name
        self.options = options
    }

    func sessionIndex(_ clientID: String) -> Int? {
        sessions.firstIndex { $0.clientID == clientID }
    }

    func retainedTopicsInOrder() -> [String] {
        retained.keys.sorted()
    }
}
