import AgentPorts

/// The client's side: what libmosquitto (as MosquittoClient drives it) does with each packet and call.
extension MemoryWorld {
    mutating func clientReceive(_ packet: Packet, on id: Int, now: Double, effects: inout PumpEffects) {
        guard let index = connectionIndex(id) else { return }
        // Fields, not a copy of the connection (which would share, and so copy on the next append, its wires).
        let client = connections[index].client
        let options = connections[index].options
        let endpoint = connections[index].endpoint
        guard clients[client].connection == id, !connections[index].clientEnded else { return }
        switch packet.kind {
        case .connack(let code, let sessionPresent, let receiveMaximum):
            guard code == 0 else {
                let (reason, isAuthorization) = MemoryReasons.connackRefused(
                    code,
                    protocolVersion: options.protocolVersion,
                    endpoint: endpoint
                )
                clientFinished(
                    client,
                    connection: id,
                    event: .connectFailed(code: code, reason: reason, isAuthorization: isAuthorization),
                    effects: &effects
                )
                removeConnection(id)
                return
            }
            clients[client].phase = .connected
            effects.events.append((client, .connected(sessionPresent: sessionPresent)))
            let window = options.maxInflightMessages
            clients[client].window = options.protocolVersion == .v5 ? min(window, receiveMaximum) : window
            // libmosquitto resends the QoS > 0 messages its handle still holds, whatever the session.
            clients[client].sentCount = 0
            sendOutbound(client, on: id, now: now)
        case .publish(let publish):
            // libmosquitto acknowledges before the message callback runs, whatever the callback then does.
            if publish.qos > 0 { sendToBroker(.puback(publish.messageID), on: id, now: now) }
            if let limit = options.maximumPacketSize,
                publish.payload.count + publish.topic.utf8.count + 4 > limit
            {
                clients[client].queue.countOversize(payloadBytes: publish.payload.count, topic: publish.topic)
                return
            }
            let message = InboundMessage(
                topic: publish.topic,
                payload: publish.payload,
                qos: publish.qos,
                retain: publish.retain,
                responseTopic: publish.responseTopic,
                correlationData: publish.correlationData
            )
            effects.events.append((client, .message(message)))
        case .puback(let messageID):
            let sent = clients[client].sentCount
            guard
                let position = clients[client].outbound.prefix(sent).firstIndex(where: {
                    $0.packet.messageID == messageID
                })
            else { return }
            clients[client].outbound.remove(at: position)
            clients[client].sentCount -= 1
            effects.acknowledgements[client, default: []].append(messageID)
            sendOutbound(client, on: id, now: now)
        case .connect, .subscribe, .disconnect:
            break
        }
    }

    /// Sends the client's unsent QoS > 0 messages, oldest first, while its window has room. The sent ones are
    /// always a prefix of `outbound` (sent in order, removed when acknowledged).
    mutating func sendOutbound(_ client: Int, on id: Int, now: Double) {
        while clients[client].sentCount < clients[client].window,
            clients[client].sentCount < clients[client].outbound.count
        {
            let position = clients[client].sentCount
            var packet = clients[client].outbound[position].packet
            packet.duplicate = clients[client].outbound[position].sent
            clients[client].outbound[position].sent = true
            clients[client].sentCount += 1
            sendToBroker(.publish(packet), on: id, now: now)
        }
    }

    /// The client's connection attempt or connection is over: its one terminal event (none once killed), back to
    /// idle, `disconnect` callers woken.
    mutating func clientFinished(_ client: Int, connection id: Int, event: BrokerEvent, effects: inout PumpEffects) {
        guard clients[client].connection == id else { return }
        if !clients[client].killed { effects.events.append((client, event)) }
        clients[client].phase = .idle
        clients[client].connection = nil
        clients[client].stopDeadline = nil
        clients[client].sentCount = 0
        effects.waiters.append(contentsOf: clients[client].waiters)
        clients[client].waiters.removeAll()
    }

    /// DISCONNECT once a requested flush is done — everything written (QoS 0) and acknowledged (QoS > 0) — or its
    /// deadline passed, or at once while the broker has not accepted the connection yet (MosquittoConnection's
    /// rule). Returns whether it sent one.
    mutating func finishStopIfDue(_ client: Int, now: Double, effects: inout PumpEffects) -> Bool {
        guard let deadline = clients[client].stopDeadline, let id = clients[client].connection,
            let index = connectionIndex(id)
        else { return false }
        let endpoint = connections[index].endpoint
        let event: BrokerEvent
        switch clients[client].phase {
        case .idle:
            return false
        case .connecting:
            event = .connectFailed(
                code: MemoryReasons.notConnectedCode,
                reason: MemoryReasons.cancelled(endpoint),
                isAuthorization: false
            )
        case .connected:
            let flushed = clients[client].outbound.isEmpty && clients[client].unwrittenQoS0 == 0
            guard flushed || now >= deadline else { return false }
            event = .disconnected(reason: MemoryReasons.requested(endpoint), expected: true)
        }
        sendToBroker(.disconnect, on: id, now: now)
        connections[index].clientEnded = true
        connections[index].down.removeAll()
        clientFinished(client, connection: id, event: event, effects: &effects)
        return true
    }

    // MARK: Calls from the client object

    mutating func connect(_ client: Int, _ options: BrokerConnectOptions, now: Double) throws(BrokerError) {
        guard !clients[client].killed else { throw MemoryReasons.killed(operation: "connect") }
        guard clients[client].phase == .idle else { throw MemoryReasons.busy }
        if let previous = clients[client].handleOptions, MemoryReasons.sameSession(previous, options) {
            // The same handle: its unacknowledged QoS > 0 messages go out again on this connection.
        } else {
            clients[client].outbound.removeAll()
            clients[client].lastMessageID = 0
        }
        clients[client].handleOptions = options
        // libmosquitto drops unwritten packets on (re)connect: QoS 0 messages never written are gone.
        clients[client].unwrittenQoS0 = 0
        clients[client].sentCount = 0
        clients[client].stopDeadline = nil
        clients[client].phase = .connecting
        let broker =
            brokers.indices.first { brokers[$0].name == options.host && brokers[$0].options.port == options.port }
        let id = nextConnectionID
        nextConnectionID += 1
        connections.append(MemoryConnection(id: id, client: client, broker: broker, options: options))
        clients[client].connection = id
        sendToBroker(.connect, on: id, now: now)
    }

    mutating func publish(
        _ client: Int,
        packet: PublishPacket,
        operation: String,
        now: Double
    ) throws(BrokerError) -> Int32 {
        guard !clients[client].killed else { throw MemoryReasons.killed(operation: operation) }
        guard clients[client].phase == .connected, let id = clients[client].connection else {
            throw MemoryReasons.notConnected(operation: operation)
        }
        let queued = packet.qos == 0 ? clients[client].unwrittenQoS0 : clients[client].outbound.count
        if queued >= clients[client].maxQueuedMessages { throw MemoryReasons.queueFull }
        guard TopicFilter.isValidTopicName(packet.topic) else { throw MemoryReasons.invalid(operation: operation) }
        var packet = packet
        packet.messageID = clients[client].nextMessageID()
        if packet.qos == 0 {
            clients[client].unwrittenQoS0 += 1
            sendToBroker(.publish(packet), on: id, now: now)
        } else {
            clients[client].outbound.append(ClientState.Outbound(packet: packet, sent: false))
            sendOutbound(client, on: id, now: now)
        }
        return packet.messageID
    }

    mutating func subscribe(_ client: Int, _ filters: [String], qos: Int, now: Double) throws(BrokerError) {
        guard !clients[client].killed else { throw MemoryReasons.killed(operation: "subscribe") }
        guard clients[client].phase == .connected, let id = clients[client].connection else {
            throw MemoryReasons.notConnected(operation: "subscribe")
        }
        guard filters.allSatisfy(TopicFilter.isValidFilter) else {
            throw MemoryReasons.invalid(operation: "subscribe to \(filters.joined(separator: ", "))")
        }
        _ = clients[client].nextMessageID()
        sendToBroker(.subscribe(filters, qos: qos), on: id, now: now)
    }

    /// `disconnect`: flush until `deadline`, then DISCONNECT (at once when nothing is outstanding). Returns false
    /// when there is nothing to end (the caller returns at once).
    mutating func requestStop(
        _ client: Int,
        deadline: Double,
        waiter: CheckedContinuation<Void, Never>,
        now: Double,
        effects: inout PumpEffects
    ) -> Bool {
        guard clients[client].phase != .idle, !clients[client].killed else { return false }
        clients[client].stopDeadline = min(clients[client].stopDeadline ?? deadline, deadline)
        clients[client].waiters.append(waiter)
        _ = finishStopIfDue(client, now: now, effects: &effects)
        return true
    }

    /// The process holding the client died: its connection is cut (the broker publishes the will), it reports
    /// nothing more, and nothing it does reaches a broker again.
    mutating func kill(_ client: Int, now: Double, effects: inout PumpEffects) {
        guard !clients[client].killed else { return }
        clients[client].killed = true
        if let id = clients[client].connection {
            cut(id, publishWill: true, now: now, effects: &effects)
        }
        effects.waiters.append(contentsOf: clients[client].waiters)
        clients[client].waiters.removeAll()
        clients[client].outbound.removeAll()
        clients[client].unwrittenQoS0 = 0
        effects.finished.append(client)
    }
}
