import AgentPorts

/// Everything on one in-memory network — brokers, clients, the connections between them and what is on their
/// wires — as one value behind the network's lock. Every order that decides what happens is an array's order
/// (brokers, clients and connections in creation order, sessions in creation order, retained topics sorted), never
/// a dictionary's: Swift seeds its hashing per process, and a schedule must replay bit for bit.
struct MemoryWorld: Sendable {
    var brokers: [BrokerState] = []
    var clients: [ClientState] = []
    /// Open connections, by increasing id.
    var connections: [MemoryConnection] = []
    var nextConnectionID = 0
    /// Pumps so far.
    var pumps: UInt64 = 0

    func connectionIndex(_ id: Int) -> Int? {
        var low = 0
        var high = connections.count
        while low < high {
            let middle = (low + high) / 2
            if connections[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < connections.count && connections[low].id == id ? low : nil
    }

    mutating func removeConnection(_ id: Int) {
        if let index = connectionIndex(id) { connections.remove(at: index) }
    }

    /// The latency of the broker a connection dialled (0 when nobody listens there).
    func latency(of connection: MemoryConnection) -> Double {
        connection.broker.map { brokers[$0].options.latencySeconds } ?? 0
    }

    /// Puts a packet on the client → broker wire.
    mutating func sendToBroker(_ kind: PacketKind, on id: Int, now: Double) {
        guard let index = connectionIndex(id) else { return }
        let due = now + latency(of: connections[index])
        connections[index].up.append(Packet(kind: kind, sentAfterPump: pumps, due: due))
    }

    /// Puts a packet on the broker → client wire; dropped when the client has closed its end.
    mutating func sendToClient(_ kind: PacketKind, on id: Int, now: Double) {
        guard let index = connectionIndex(id), !connections[index].clientEnded else { return }
        let due = now + latency(of: connections[index])
        connections[index].down.append(Packet(kind: kind, sentAfterPump: pumps, due: due))
        if connections[index].downPump != pumps {
            connections[index].downPump = pumps
            connections[index].downRecent = 0
        }
        connections[index].downRecent += 1
    }

    /// Packets waiting on the broker → client wire beyond what the client reads at its next turn: what mosquitto's
    /// count of unwritten outgoing packets becomes here. A burst routed within one pump is not held against a client
    /// that will read it at its next turn (`readsPerPump`); a stalled one reads nothing.
    func unreadPackets(_ index: Int) -> Int {
        let recent = connections[index].downPump == pumps ? connections[index].downRecent : 0
        let readable = connections[index].stalledDown ? 0 : clients[connections[index].client].readsPerPump
        return connections[index].down.count - min(recent, readable)
    }

    /// One network turn: every packet sent before it and due by `now` moves one hop — client → broker on every
    /// connection first, then broker → client (at most `readsPerPump` PUBLISH packets per client) — and every
    /// client asked to disconnect whose flush is done (or whose deadline passed) sends DISCONNECT. Connections are
    /// visited in creation order. Returns whether anything moved.
    mutating func pump(now: Double, effects: inout PumpEffects) -> Bool {
        pumps += 1
        let current = pumps
        var moved = false
        let ids = connections.map(\.id)
        for id in ids {
            // Fields, not a copy of the connection: a copy would share the wire's storage, and the pop below would
            // then copy the whole wire.
            while let index = connectionIndex(id) {
                guard !connections[index].stalledUp, let packet = connections[index].up.first,
                    packet.sentAfterPump < current, packet.due <= now
                else { break }
                connections[index].up.popFirst()
                moved = true
                brokerReceive(packet, on: id, now: now, effects: &effects)
            }
        }
        for id in ids {
            var reads = 0
            while let index = connectionIndex(id) {
                guard !connections[index].stalledDown, let packet = connections[index].down.first,
                    packet.sentAfterPump < current, packet.due <= now
                else { break }
                if packet.isPublish {
                    guard reads < clients[connections[index].client].readsPerPump else { break }
                    reads += 1
                }
                connections[index].down.popFirst()
                moved = true
                clientReceive(packet, on: id, now: now, effects: &effects)
            }
        }
        for client in clients.indices where finishStopIfDue(client, now: now, effects: &effects) {
            moved = true
        }
        return moved
    }

    /// The earliest time a pump would move something: a packet's arrival or a flush deadline; nil when nothing is
    /// pending.
    func nextDueTime() -> Double? {
        var earliest: Double?
        func consider(_ time: Double?) {
            guard let time else { return }
            earliest = min(earliest ?? time, time)
        }
        // By index: a copy of a client's state (a weak reference inside) or a connection's (its wires) costs
        // more than the check, and the simulation asks after every step.
        for index in connections.indices {
            if !connections[index].stalledUp { consider(connections[index].up.first?.due) }
            if !connections[index].stalledDown { consider(connections[index].down.first?.due) }
        }
        for index in clients.indices where clients[index].phase != .idle && clients[index].connection != nil {
            consider(clients[index].stopDeadline)
        }
        return earliest
    }

    /// The connection is cut, as a network failure cuts it: what is on its wires is lost, the broker ends the
    /// session's connection (publishing the will when `publishWill`), the client reports the loss (`event`, or the
    /// lost-connection event for its phase).
    mutating func cut(
        _ id: Int,
        publishWill: Bool,
        clientEvent: BrokerEvent? = nil,
        now: Double,
        effects: inout PumpEffects
    ) {
        guard let index = connectionIndex(id) else { return }
        let connection = connections[index]
        connections[index].up.removeAll()
        connections[index].down.removeAll()
        if connection.accepted, let broker = connection.broker {
            endSessionConnection(id, broker: broker, publishWill: publishWill, now: now, effects: &effects)
        }
        if !connection.clientEnded {
            let client = connection.client
            let event =
                clientEvent
                ?? (clients[client].phase == .connected
                    ? .disconnected(reason: MemoryReasons.lost(connection.endpoint), expected: false)
                    : .connectFailed(
                        code: MemoryReasons.connectionLostCode,
                        reason: MemoryReasons.endedBeforeConnack(connection.endpoint),
                        isAuthorization: false
                    ))
            clientFinished(client, connection: id, event: event, effects: &effects)
        }
        removeConnection(id)
    }
}
