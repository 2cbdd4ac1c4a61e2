import AgentPorts

/// The broker's side: what mosquitto 2.0 does with each packet a client sends, and how it routes and queues.
extension MemoryWorld {
    mutating func brokerReceive(_ packet: Packet, on id: Int, now: Double, effects: inout PumpEffects) {
        guard let index = connectionIndex(id) else { return }
        // Fields, not a copy of the connection (which would share, and so copy on the next append, its wires).
        let client = connections[index].client
        let accepted = connections[index].accepted
        let connectionBroker = connections[index].broker
        switch packet.kind {
        case .connect:
            brokerConnect(id, now: now, effects: &effects)
        case .publish(let publish):
            // The message has left the client: no longer in libmosquitto's unwritten queue.
            if publish.qos == 0, clients[client].connection == id {
                clients[client].unwrittenQoS0 = max(0, clients[client].unwrittenQoS0 - 1)
            }
            guard accepted, let broker = connectionBroker else { return }
            if let observer = brokers[broker].publishObserver {
                let publication = MemoryBroker.Publication(
                    clientID: connections[index].sessionClientID ?? connections[index].options.clientID,
                    topic: publish.topic,
                    payload: publish.payload,
                    qos: publish.qos,
                    retain: publish.retain,
                    duplicate: publish.duplicate,
                    responseTopic: publish.responseTopic,
                    correlationData: publish.correlationData
                )
                effects.publications.append((observer, publication))
            }
            accept(publish, broker: broker, now: now, effects: &effects)
            if publish.qos > 0 { sendToClient(.puback(publish.messageID), on: id, now: now) }
        case .puback(let messageID):
            guard accepted, let broker = connectionBroker,
                let session = brokers[broker].sessions.firstIndex(where: { $0.connection == id })
            else { return }
            if let position = brokers[broker].sessions[session].inflight.firstIndex(where: {
                $0.messageID == messageID
            }) {
                brokers[broker].sessions[session].inflight.remove(at: position)
                fillInflight(broker: broker, session: session, now: now, effects: &effects)
            }
        case .subscribe(let filters, let qos):
            guard accepted, let broker = connectionBroker,
                let session = brokers[broker].sessions.firstIndex(where: { $0.connection == id })
            else { return }
            subscribe(filters, qos: qos, broker: broker, session: session, now: now, effects: &effects)
        case .disconnect:
            // A normal DISCONNECT: the will is discarded.
            if accepted, let broker = connectionBroker {
                endSessionConnection(id, broker: broker, publishWill: false, now: now, effects: &effects)
            }
            removeConnection(id)
        case .connack:
            break
        }
    }

    private mutating func brokerConnect(_ id: Int, now: Double, effects: inout PumpEffects) {
        guard let index = connectionIndex(id) else { return }
        guard let broker = connections[index].broker, brokers[broker].running else {
            // Nobody listens there: the TCP connect is refused.
            clientFinished(
                connections[index].client,
                connection: id,
                event: .connectFailed(
                    code: MemoryReasons.refusedCode,
                    reason: MemoryReasons.refused(connections[index].endpoint),
                    isAuthorization: false
                ),
                effects: &effects
            )
            removeConnection(id)
            return
        }
        let options = connections[index].options
        let version = options.protocolVersion
        if let users = brokers[broker].options.users {
            let refusal: Int?
            if let username = options.username {
                refusal =
                    users[username] != nil && users[username] == options.password ? nil : (version == .v5 ? 0x86 : 4)
            } else {
                refusal = version == .v5 ? 0x87 : 5
            }
            if let refusal {
                // CONNACK with the refusal; the broker then closes the connection (the client removes it).
                sendToClient(.connack(reasonCode: refusal, sessionPresent: false, receiveMaximum: 0), on: id, now: now)
                return
            }
        }
        var clientID = options.clientID
        if clientID.isEmpty {
            brokers[broker].generatedIDs += 1
            clientID = "auto-\(brokers[broker].name)-\(brokers[broker].generatedIDs)"
        }
        // A client id already connected: the older connection is closed (mosquitto 2.0.11 sends no DISCONNECT
        // 0x8E: its client sees the connection lost) and its will published.
        if let existing = brokers[broker].sessionIndex(clientID),
            let older = brokers[broker].sessions[existing].connection, older != id
        {
            cut(older, publishWill: true, now: now, effects: &effects)
        }
        var sessionPresent = false
        if let existing = brokers[broker].sessionIndex(clientID) {
            if options.cleanSession || brokers[broker].sessions[existing].hasExpired(at: now) {
                brokers[broker].sessions.remove(at: existing)
            } else {
                sessionPresent = true
            }
        }
        // MosquittoClient sends a Session Expiry Interval only for a persistent MQTT 5 session (0 there means
        // "never"); MQTT 3.1.1's clean_session=false persists for good (mosquitto's persistent_client_expiration
        // is unset by default).
        let expiry: UInt32 =
            options.cleanSession
            ? 0 : (version == .v5 && options.sessionExpirySeconds != 0 ? options.sessionExpirySeconds : .max)
        if !sessionPresent {
            brokers[broker].sessions.append(
                BrokerSession(clientID: clientID, expirySeconds: expiry, protocolVersion: version)
            )
        }
        guard let session = brokers[broker].sessionIndex(clientID) else { return }
        brokers[broker].sessions[session].connection = id
        brokers[broker].sessions[session].disconnectedAt = nil
        brokers[broker].sessions[session].expirySeconds = expiry
        brokers[broker].sessions[session].protocolVersion = version
        brokers[broker].sessions[session].maximumPacketSize = version == .v5 ? options.maximumPacketSize : nil
        brokers[broker].sessions[session].will = options.will
        brokers[broker].sessions[session].leakedWindow = 0
        if let index = connectionIndex(id) {
            connections[index].accepted = true
            connections[index].sessionClientID = clientID
        }
        let window = brokers[broker].options.maxInflightMessages
        sendToClient(
            .connack(reasonCode: 0, sessionPresent: sessionPresent, receiveMaximum: window == 0 ? 65535 : window),
            on: id,
            now: now
        )
        // What the session is owed: the messages in flight when it was last connected (again, DUP set), then the
        // queue, as far as the window allows; expired ones are dropped.
        let inflight = brokers[broker].sessions[session].inflight
        brokers[broker].sessions[session].inflight = []
        for outgoing in inflight {
            if let expiresAt = outgoing.message.expiresAt, now >= expiresAt {
                countDrop(\.expired, clientID: clientID, broker: broker)
                continue
            }
            if send(outgoing, duplicate: true, broker: broker, session: session, now: now, effects: &effects) {
                brokers[broker].sessions[session].inflight.append(outgoing)
            } else {
                brokers[broker].sessions[session].leakedWindow += 1
            }
        }
        fillInflight(broker: broker, session: session, now: now, effects: &effects)
    }

    /// A PUBLISH the broker received (or a will it publishes): the retained store, then every matching subscription.
    mutating func accept(_ publish: PublishPacket, broker: Int, now: Double, effects: inout PumpEffects) {
        let message = StoredMessage(
            topic: publish.topic,
            payload: publish.payload,
            qos: publish.qos,
            responseTopic: publish.responseTopic,
            correlationData: publish.correlationData,
            expiresAt: publish.expirySeconds.map { now + Double($0) }
        )
        if publish.retain {
            if publish.payload.isEmpty {
                brokers[broker].retained.removeValue(forKey: publish.topic)
            } else {
                brokers[broker].retained[publish.topic] = message
            }
        }
        route(message, broker: broker, now: now, effects: &effects)
    }

    /// Sends `message` to every session with a matching subscription, in session creation order. Expired offline
    /// sessions are removed on the way.
    private mutating func route(_ message: StoredMessage, broker: Int, now: Double, effects: inout PumpEffects) {
        var expired: [Int] = []
        for session in brokers[broker].sessions.indices {
            if brokers[broker].sessions[session].hasExpired(at: now) {
                expired.append(session)
                continue
            }
            // MQTT 5: a copy per matching subscription. MQTT 3.1.1: one copy (mosquitto 2.0.11 keeps
            // allow_duplicate_messages false for it, whatever its manual says), here at the highest matching QoS.
            let once = brokers[broker].sessions[session].protocolVersion == .v311
            var onceQoS: Int?
            for subscription in brokers[broker].sessions[session].subscriptions
            where subscription.matches(message.topic) {
                if once {
                    onceQoS = max(onceQoS ?? 0, subscription.qos)
                    continue
                }
                deliver(
                    message,
                    qos: min(message.qos, subscription.qos),
                    retain: false,
                    broker: broker,
                    session: session,
                    now: now,
                    effects: &effects
                )
            }
            if let onceQoS {
                deliver(
                    message,
                    qos: min(message.qos, onceQoS),
                    retain: false,
                    broker: broker,
                    session: session,
                    now: now,
                    effects: &effects
                )
            }
        }
        for session in expired.reversed() { brokers[broker].sessions.remove(at: session) }
    }

    /// Subscriptions added (or their QoS replaced), then every retained message matching each filter, with the
    /// retain flag, on every SUBSCRIBE — a repeated one too (Retain Handling 0).
    private mutating func subscribe(
        _ filters: [String],
        qos: Int,
        broker: Int,
        session: Int,
        now: Double,
        effects: inout PumpEffects
    ) {
        for filter in filters {
            if let existing = brokers[broker].sessions[session].subscriptions.firstIndex(where: { $0.filter == filter })
            {
                brokers[broker].sessions[session].subscriptions[existing].qos = qos
            } else {
                brokers[broker].sessions[session].subscriptions.append(.init(filter: filter, qos: qos))
            }
        }
        guard !brokers[broker].retained.isEmpty else { return }
        let topics = brokers[broker].retainedTopicsInOrder()
        for filter in filters {
            for topic in topics where TopicFilter.matches(filter: filter, topic: topic) {
                guard let message = brokers[broker].retained[topic] else { continue }
                if let expiresAt = message.expiresAt, now >= expiresAt {
                    brokers[broker].retained.removeValue(forKey: topic)
                    continue
                }
                deliver(
                    message,
                    qos: min(message.qos, qos),
                    retain: true,
                    broker: broker,
                    session: session,
                    now: now,
                    effects: &effects
                )
            }
        }
    }

    /// mosquitto 2.0's db__message_insert for an outgoing message: a connected client gets QoS 0 unless
    /// `maxQueuedMessages` packets already wait on its wire, and QoS 1 in flight while its window has room, else
    /// queued up to `maxQueuedMessages`, else dropped; an offline persistent session queues QoS 1 up to
    /// `maxQueuedMessages` in all (in flight when it left included) and never QoS 0.
    private mutating func deliver(
        _ message: StoredMessage,
        qos: Int,
        retain: Bool,
        broker: Int,
        session: Int,
        now: Double,
        effects: inout PumpEffects
    ) {
        let clientID = brokers[broker].sessions[session].clientID
        if let expiresAt = message.expiresAt, now >= expiresAt {
            countDrop(\.expired, clientID: clientID, broker: broker)
            return
        }
        let queueLimit = Self.limit(brokers[broker].options.maxQueuedMessages)
        let window = windowLeft(broker: broker, session: session)
        var outgoing = BrokerSession.Outgoing(message: message, qos: qos, retain: retain, messageID: 0)
        if let id = brokers[broker].sessions[session].connection, let index = connectionIndex(id) {
            if qos == 0 {
                guard unreadPackets(index) < queueLimit else {
                    countDrop(\.queueFull, clientID: clientID, broker: broker)
                    return
                }
                send(outgoing, duplicate: false, broker: broker, session: session, now: now, effects: &effects)
            } else if brokers[broker].sessions[session].inflight.count < window
                && brokers[broker].sessions[session].queued.isEmpty
            {
                outgoing.messageID = brokers[broker].sessions[session].nextMessageID()
                if send(outgoing, duplicate: false, broker: broker, session: session, now: now, effects: &effects) {
                    brokers[broker].sessions[session].inflight.append(outgoing)
                } else {
                    brokers[broker].sessions[session].leakedWindow += 1
                }
            } else if brokers[broker].sessions[session].queued.count < queueLimit {
                brokers[broker].sessions[session].queued.append(outgoing)
            } else {
                countDrop(\.queueFull, clientID: clientID, broker: broker)
            }
        } else {
            guard qos > 0 else {
                countDrop(\.offlineQoS0, clientID: clientID, broker: broker)
                return
            }
            let held = brokers[broker].sessions[session].inflight.count + brokers[broker].sessions[session].queued.count
            guard held < queueLimit else {
                countDrop(\.queueFull, clientID: clientID, broker: broker)
                return
            }
            brokers[broker].sessions[session].queued.append(outgoing)
        }
    }

    /// Moves queued messages into flight while the window has room (after a PUBACK, on reconnection).
    private mutating func fillInflight(broker: Int, session: Int, now: Double, effects: inout PumpEffects) {
        guard brokers[broker].sessions[session].connection != nil else { return }
        while brokers[broker].sessions[session].inflight.count < windowLeft(broker: broker, session: session),
            var outgoing = brokers[broker].sessions[session].queued.popFirst()
        {
            if let expiresAt = outgoing.message.expiresAt, now >= expiresAt {
                countDrop(\.expired, clientID: brokers[broker].sessions[session].clientID, broker: broker)
                continue
            }
            outgoing.messageID = brokers[broker].sessions[session].nextMessageID()
            if send(outgoing, duplicate: false, broker: broker, session: session, now: now, effects: &effects) {
                brokers[broker].sessions[session].inflight.append(outgoing)
            } else {
                brokers[broker].sessions[session].leakedWindow += 1
            }
        }
    }

    /// The session's in-flight window: `maxInflightMessages`, less one for every QoS 1 message dropped as too large
    /// on this connection — mosquitto 2.0.11 removes such a message without giving its send quota back
    /// (db__message_write_inflight_out_single), so the slot stays taken until the client reconnects.
    private func windowLeft(broker: Int, session: Int) -> Int {
        let window = Self.limit(brokers[broker].options.maxInflightMessages)
        guard window != .max else { return window }
        return max(0, window - brokers[broker].sessions[session].leakedWindow)
    }

    /// Puts a PUBLISH for a connected session on its wire: MQTT 5 clients get the request/response properties and
    /// the remaining expiry interval, MQTT 3.1.1 clients none; a packet larger than the client's Maximum Packet
    /// Size is dropped instead (false).
    @discardableResult
    private mutating func send(
        _ outgoing: BrokerSession.Outgoing,
        duplicate: Bool,
        broker: Int,
        session: Int,
        now: Double,
        effects: inout PumpEffects
    ) -> Bool {
        let state = brokers[broker].sessions[session]
        guard let id = state.connection else { return false }
        let message = outgoing.message
        var packet = PublishPacket(
            topic: message.topic,
            payload: message.payload,
            qos: outgoing.qos,
            retain: outgoing.retain,
            messageID: outgoing.messageID,
            duplicate: duplicate
        )
        if state.protocolVersion == .v5 {
            packet.responseTopic = message.responseTopic
            packet.correlationData = message.correlationData
            if let expiresAt = message.expiresAt {
                packet.expirySeconds = UInt32(clamping: max(1, Int((expiresAt - now).rounded(.up))))
            }
        }
        if let limit = state.maximumPacketSize, Self.packetSize(packet, v5: state.protocolVersion == .v5) > limit {
            countDrop(\.oversize, clientID: state.clientID, broker: broker)
            return false
        }
        sendToClient(.publish(packet), on: id, now: now)
        if let observer = brokers[broker].observer {
            effects.deliveries.append(
                (
                    observer,
                    MemoryBroker.Delivery(
                        clientID: state.clientID,
                        topic: packet.topic,
                        payload: packet.payload,
                        qos: packet.qos,
                        retain: packet.retain,
                        duplicate: duplicate,
                        messageExpirySeconds: packet.expirySeconds,
                        responseTopic: packet.responseTopic,
                        correlationData: packet.correlationData
                    )
                )
            )
        }
        return true
    }

    /// The session's connection ended: it stays (offline) when persistent, else it is gone; the will is published
    /// when the end was not a DISCONNECT.
    mutating func endSessionConnection(
        _ id: Int,
        broker: Int,
        publishWill: Bool,
        now: Double,
        effects: inout PumpEffects
    ) {
        guard let session = brokers[broker].sessions.firstIndex(where: { $0.connection == id }) else { return }
        let will = brokers[broker].sessions[session].will
        brokers[broker].sessions[session].connection = nil
        brokers[broker].sessions[session].disconnectedAt = now
        brokers[broker].sessions[session].will = nil
        if brokers[broker].sessions[session].expirySeconds == 0 {
            brokers[broker].sessions.remove(at: session)
        }
        if publishWill, let will {
            accept(
                PublishPacket(
                    topic: will.topic,
                    payload: will.payload,
                    qos: will.qos,
                    retain: will.retain,
                    messageID: 0,
                    duplicate: false
                ),
                broker: broker,
                now: now,
                effects: &effects
            )
        }
    }

    private mutating func countDrop(_ counter: WritableKeyPath<MemoryBroker.Drops, Int>, clientID: String, broker: Int)
    {
        brokers[broker].drops[clientID, default: MemoryBroker.Drops()][keyPath: counter] += 1
    }

    /// mosquitto's convention: 0 means no limit.
    static func limit(_ value: Int) -> Int { value <= 0 ? .max : value }

    /// The size of a PUBLISH on the wire (MQTT 5 §3.3): fixed header, topic, packet id, properties, payload.
    static func packetSize(_ packet: PublishPacket, v5: Bool) -> Int {
        var remaining = 2 + packet.topic.utf8.count + (packet.qos > 0 ? 2 : 0) + packet.payload.count
        if v5 {
            var properties = 0
            if packet.expirySeconds != nil { properties += 5 }
            if let topic = packet.responseTopic { properties += 3 + topic.utf8.count }
            if let data = packet.correlationData { properties += 3 + data.count }
            remaining += variableIntegerBytes(properties) + properties
        }
        return 1 + variableIntegerBytes(remaining) + remaining
    }

    private static func variableIntegerBytes(_ value: Int) -> Int {
        switch value {
        case ..<128: 1
        case ..<16_384: 2
        case ..<2_097_152: 3
        default: 4
        }
    }
}
