import AgentPorts

/// The `BrokerClient` port on an in-memory network, with MosquittoClient's client-side behaviour: one terminal
/// event per connection attempt (`.connectFailed`, or `.disconnected` after `.connected`); `events` bounded in
/// messages and bytes with counted drops, inbound messages larger than the connection's `maximumPacketSize` dropped
/// and counted; `publish` refusing past `maxQueuedMessages`; acknowledgements handed to the handler in one batch
/// per pump, never through `events` and never from inside `publish`; unacknowledged QoS > 0 messages kept and sent
/// again on the next connection made with the same session options (libmosquitto's handle).
///
/// Nothing happens between pumps (`MemoryBroker.pump()`): `connect` queues CONNECT and its outcome arrives in a
/// later pump; `disconnect` returns at once when nothing is left to flush, otherwise when a pump finds the flush
/// done or its deadline (`flushTimeout` seconds on the network's clock) passed — so something must keep pumping
/// while it is awaited.
package final class MemoryBrokerClient: BrokerClient {
    let network: MemoryNetwork
    let index: Int
    package let events: AsyncStream<BrokerEvent>
    private let queue: MemoryEventQueue

    init(
        network: MemoryNetwork,
        eventBacklogLimit: Int,
        eventBacklogBytes: Int,
        maxQueuedMessages: Int,
        readsPerPump: Int
    ) {
        self.network = network
        let queue = MemoryEventQueue(dataLimit: max(1, eventBacklogLimit), byteLimit: max(1, eventBacklogBytes))
        self.queue = queue
        events = queue.makeStream()
        index = network.world.withLock { world in
            world.clients.append(
                ClientState(
                    queue: queue,
                    maxQueuedMessages: min(max(1, maxQueuedMessages), 30_000),
                    readsPerPump: max(0, readsPerPump)
                )
            )
            return world.clients.count - 1
        }
    }

    deinit {
        // As MosquittoClient's: an open connection is closed with DISCONNECT (no will), the stream ended.
        let client = index
        network.mutate { world, now, effects in
            guard world.clients[client].phase != .idle, !world.clients[client].killed else { return }
            world.clients[client].stopDeadline = now
            _ = world.finishStopIfDue(client, now: now, effects: &effects)
        }
        queue.finish()
    }

    package var isConnected: Bool { network.world.withLock { $0.clients[index].phase == .connected } }

    package var droppedInboundCount: Int { queue.drops.behind }

    package var inboundDrops: InboundDrops { queue.drops }

    package func setAcknowledgementHandler(_ handler: (any BrokerAcknowledgementHandler)?) {
        network.world.withLock { $0.clients[index].handler = handler }
    }

    /// Messages handed over and not yet written (QoS 0) or acknowledged (QoS > 0).
    package var queuedMessageCount: Int { network.world.withLock { $0.clients[index].queuedMessageCount } }

    /// Takes every event waiting in `events`, for a test that reads them synchronously between pumps instead of
    /// iterating the stream (never both).
    package func takeEvents() -> [BrokerEvent] {
        queue.drain()
    }

    /// PUBLISH packets read from the connection per pump; lower it to make this client a slow consumer.
    package var readsPerPump: Int {
        get { network.world.withLock { $0.clients[index].readsPerPump } }
        set { network.world.withLock { $0.clients[index].readsPerPump = max(0, newValue) } }
    }

    package func connect(_ options: BrokerConnectOptions) throws(BrokerError) {
        try MemoryReasons.validate(options)
        let client = index
        try network.mutate { (world, now, _) throws(BrokerError) in
            try world.connect(client, options, now: now)
        }
    }

    package func disconnect(flushTimeout: Double) async {
        let flushSeconds = flushTimeout.isFinite ? min(max(0, flushTimeout), 3600) : 0
        let client = index
        let network = self.network
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = network.mutate { world, now, effects in
                world.requestStop(
                    client,
                    deadline: now + flushSeconds,
                    waiter: continuation,
                    now: now,
                    effects: &effects
                )
            }
            if !waiting { continuation.resume() }
        }
    }

    package func publish(
        topic: String,
        payload: UnsafeRawBufferPointer,
        qos: Int,
        retain: Bool,
        expirySeconds: UInt32
    ) throws(BrokerError) -> Int32 {
        guard (0...2).contains(qos) else { throw MemoryReasons.invalidQoS(operation: "publish") }
        guard payload.count <= 268_435_455 else { throw MemoryReasons.payloadTooLarge }
        let client = index
        return try network.mutate { (world, now, _) throws(BrokerError) -> Int32 in
            let expiry: UInt32? =
                expirySeconds > 0 && world.clients[client].handleOptions?.protocolVersion == .v5 ? expirySeconds : nil
            return try world.publish(
                client,
                packet: PublishPacket(
                    topic: topic,
                    payload: [UInt8](payload),
                    qos: qos,
                    retain: retain,
                    messageID: 0,
                    duplicate: false,
                    expirySeconds: expiry
                ),
                operation: "publish",
                now: now
            )
        }
    }

    package func publishResponse(
        topic: String,
        payload: [UInt8],
        correlationData: [UInt8]?
    ) throws(BrokerError) {
        try publishWithProperties(
            topic: topic,
            payload: payload,
            responseTopic: nil,
            correlationData: correlationData,
            operation: "publish response"
        )
    }

    /// Publishes an MQTT 5 request: the receiver answers on `responseTopic` with `correlationData` (QoS 1). On
    /// MQTT 3.1.1 the properties do not exist and a plain QoS 1 message is sent.
    package func publishRequest(
        topic: String,
        payload: [UInt8],
        responseTopic: String,
        correlationData: [UInt8]
    ) throws(BrokerError) {
        try publishWithProperties(
            topic: topic,
            payload: payload,
            responseTopic: responseTopic,
            correlationData: correlationData,
            operation: "publish request"
        )
    }

    private func publishWithProperties(
        topic: String,
        payload: [UInt8],
        responseTopic: String?,
        correlationData: [UInt8]?,
        operation: String
    ) throws(BrokerError) {
        guard payload.count <= 268_435_455 else { throw MemoryReasons.payloadTooLarge }
        let client = index
        _ = try network.mutate { (world, now, _) throws(BrokerError) -> Int32 in
            let v5 = world.clients[client].handleOptions?.protocolVersion == .v5
            return try world.publish(
                client,
                packet: PublishPacket(
                    topic: topic,
                    payload: payload,
                    qos: 1,
                    retain: false,
                    messageID: 0,
                    duplicate: false,
                    responseTopic: v5 ? responseTopic : nil,
                    correlationData: v5 ? correlationData : nil
                ),
                operation: operation,
                now: now
            )
        }
    }

    /// Sends one SUBSCRIBE for all `filters`; the retained messages of each come after it. Subscriptions of a clean
    /// session end with the connection.
    package func subscribe(_ filters: [String], qos: Int) throws(BrokerError) {
        guard (0...2).contains(qos) else { throw MemoryReasons.invalidQoS(operation: "subscribe") }
        guard !filters.isEmpty else { return }
        let client = index
        try network.mutate { (world, now, _) throws(BrokerError) in
            try world.subscribe(client, filters, qos: qos, now: now)
        }
    }

    /// The process holding this client died: its connection is cut without DISCONNECT (the broker publishes the
    /// will), `events` ends, no acknowledgement is handed over any more, and every later call fails.
    package func kill() {
        let client = index
        network.mutate { world, now, effects in
            world.kill(client, now: now, effects: &effects)
        }
    }
}
