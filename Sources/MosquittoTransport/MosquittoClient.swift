import AgentPorts
internal import CMosquitto
import Foundation
import Logging

/// The MQTT port implemented over libmosquitto 2.0.
///
/// Threading: each `connect` starts one network thread that owns the connection until it ends: it makes the
/// (blocking) TCP connect, then calls `mosquitto_loop` (1 s timeout; 100 ms once stopping) until the connection closes, and
/// finally reports exactly one terminal event (`.connectFailed`, or `.disconnected` after `.connected`) and
/// exits. libmosquitto's own `mosquitto_loop_start` thread is not used: it reconnects on its own and exits
/// silently on several errors, while here reconnecting is the agent's decision. The handle is in threaded
/// mode, so `publish` and `subscribe` from any thread only queue the packet and wake the loop through
/// libmosquitto's socket pair; they never wait on the network. Callbacks run on the network thread and only
/// yield into `events`; acknowledgements are handed, once per loop turn, to the acknowledgement handler.
package final class MosquittoClient: BrokerClient {
    let core: MosquittoClientCore

    /// - Parameters:
    ///   - logger: for the rare conditions no event carries (a broker refusing published messages).
    ///   - eventBacklogLimit: inbound messages that may wait in `events` for a slow consumer before later ones
    ///     are dropped (`droppedInboundCount`); connection events are never dropped, and acknowledgements go to
    ///     the acknowledgement handler, not through `events`.
    ///   - eventBacklogBytes: the bytes (`InboundMessage.byteCount`) those waiting messages may hold before later
    ///     ones are dropped and counted the same way; one message larger than this still passes when none waits.
    ///   - maxQueuedMessages: QoS > 0 messages awaiting acknowledgement, and separately QoS 0 messages not
    ///     yet written, beyond which `publish` refuses: libmosquitto itself queues without bound. 1…30000.
    package init(
        logger: Logger = Logger(label: "motion-agent.mqtt"),
        eventBacklogLimit: Int = 16_384,
        eventBacklogBytes: Int = 64 << 20,
        maxQueuedMessages: Int = 20_000
    ) {
        MosquittoLibrary.ensureInitialized()
        core = MosquittoClientCore(
            logger: logger,
            eventBacklogLimit: max(1, eventBacklogLimit),
            eventBacklogBytes: max(1, eventBacklogBytes),
            maxQueuedMessages: min(max(1, maxQueuedMessages), 30_000)
        )
    }

    deinit {
        // A running network thread keeps the handle and the core alive on its own; ask it to DISCONNECT
        // and exit, and end the stream for whoever still iterates it.
        let now = ContinuousClock.now
        core.locked.withLock { state in
            if core.phase != .idle { core.requestStop(deadline: now, in: &state) }
        }
        core.channel.finish()
    }

    /// "major.minor.revision" of the libmosquitto loaded at run time.
    package static var libraryVersion: String {
        let version = MosquittoLibrary.version()
        return "\(version.major).\(version.minor).\(version.revision)"
    }

    package var events: AsyncStream<BrokerEvent> { core.channel.stream }

    package var isConnected: Bool { core.phase == .connected }

    /// Inbound messages dropped because `events` was `eventBacklogLimit` messages or `eventBacklogBytes` bytes
    /// behind.
    package var droppedInboundCount: Int { core.channel.droppedDataEvents }

    package var inboundDrops: InboundDrops { core.channel.drops }

    package func setAcknowledgementHandler(_ handler: (any BrokerAcknowledgementHandler)?) {
        core.locked.withLock { $0.acknowledgementHandler = handler }
    }

    /// Messages handed to libmosquitto and not yet written (QoS 0) or acknowledged (QoS > 0).
    package var queuedMessageCount: Int {
        core.locked.withLock { $0.outstanding.awaitingAcknowledgement + $0.outstanding.unwrittenQoS0 }
    }

    package func connect(_ options: BrokerConnectOptions) throws(BrokerError) {
        try Self.validate(options)
        let core = self.core
        let connection = try core.locked.withLock { (state) throws(BrokerError) -> MosquittoConnection in
            guard core.phase == .idle else {
                throw BrokerError(
                    operation: "connect",
                    code: Int(MosquittoError.invalid),
                    message:
                        "a connection is already open or being opened — wait for its .disconnected or .connectFailed event, or call disconnect(flushTimeout:) first"
                )
            }
            let handle: MosquittoHandle
            if let existing = state.handle, let previous = state.handleOptions,
                Self.sameSession(previous, options)
            {
                // Another server of the same cluster (mqtt.servers), or the same one: the handle keeps the
                // QoS > 0 messages awaiting acknowledgement and resends them on the new connection, so a
                // failover loses none of them. Only the protocol version may need setting again.
                handle = existing
                if previous.protocolVersion != options.protocolVersion {
                    try Self.configureProtocol(handle, options)
                }
                if previous.will != options.will {
                    try Self.configureWill(handle, options)
                }
                state.handleOptions = options
            } else {
                handle = try MosquittoHandle(
                    clientID: options.clientID.isEmpty ? nil : options.clientID,
                    cleanSession: options.cleanSession
                )
                try Self.configure(handle, options)
                state.handle = handle
                state.handleOptions = options
                state.outstanding.removeAll()
            }
            state.outstanding.connectionStarted()
            state.protocolVersion = options.protocolVersion
            state.stopDeadline = nil
            core.stopRequested.store(false, ordering: .releasing)
            let connection = MosquittoConnection(
                core: core,
                handle: handle,
                options: options,
                connectProperties: try Self.connectProperties(options)
            )
            core.setPhase(.connecting)
            return connection
        }
        // The userdata reference: taken here, given back by the thread after its last library call.
        let userdata = Unmanaged.passRetained(connection)
        mosquitto_user_data_set(connection.handle.pointer, userdata.toOpaque())
        let thread = Thread {
            connection.run()
            userdata.release()
        }
        thread.name = "mqtt \(connection.endpoint)"
        thread.start()
    }

    package func disconnect(flushTimeout: Double) async {
        let flushSeconds = flushTimeout.isFinite ? min(max(0, flushTimeout), 3600) : 0
        let deadline = ContinuousClock.now + .seconds(flushSeconds)
        let core = self.core
        var bound: Task<Void, Never>?
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiterID = core.locked.withLock { state -> Int? in
                guard core.phase != .idle else { return nil }
                core.requestStop(deadline: deadline, in: &state)
                let id = state.nextWaiterID
                state.nextWaiterID += 1
                state.waiters.append((id, continuation))
                return id
            }
            guard let waiterID else {
                continuation.resume()
                return
            }
            // The network thread needs at most the flush, 1 s to write DISCONNECT and one loop turn (woken by
            // requestStop while connected; up to 1 s while a connection is still being made).
            // Only a blocking TCP connect to an unreachable host (minutes of SYN retries) can hold it longer;
            // stop waiting then — the thread still disconnects and exits when the connect call returns.
            bound = Task {
                try? await Task.sleep(for: .seconds(flushSeconds + 3))
                core.abandonWaiter(waiterID)
            }
        }
        bound?.cancel()
    }

    package func publish(
        topic: String,
        payload: UnsafeRawBufferPointer,
        qos: Int,
        retain: Bool,
        expirySeconds: UInt32
    ) throws(BrokerError) -> Int32 {
        guard (0...2).contains(qos) else { throw Self.invalidQoS(operation: "publish") }
        guard payload.count <= Self.maximumPayloadBytes else { throw Self.payloadTooLarge }
        let core = self.core
        var messageID: Int32 = 0
        let rc = try core.locked.withLock { (state) throws(BrokerError) -> Int32 in
            guard core.phase == .connected, let handle = state.handle else {
                throw Self.notConnected(operation: "publish")
            }
            try Self.checkQueueRoom(state.outstanding, qos: qos, limit: core.maxQueuedMessages)
            let rc = topic.withCString { topicPointer in
                // A bare list, not `MosquittoProperties`, so a publish allocates nothing on the Swift side;
                // mosquitto_publish_v5 copies the properties it keeps ("mosquitto_property_free_all: Free
                // all properties from a list of properties. Frees the list and sets *properties to NULL.").
                // MQTT 3.1.1 has no properties (mosquitto_publish is mosquitto_publish_v5 with none): there the
                // agent's outbox is the only one to drop stale messages.
                var properties: OpaquePointer?
                defer { mosquitto_property_free_all(&properties) }
                if expirySeconds > 0, state.protocolVersion == .v5 {
                    let added = mosquitto_property_add_int32(
                        &properties,
                        Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue),
                        expirySeconds
                    )
                    guard added == MosquittoError.success else { return added }
                }
                return mosquitto_publish_v5(
                    handle.pointer,
                    &messageID,
                    topicPointer,
                    Int32(payload.count),
                    payload.baseAddress,
                    Int32(qos),
                    retain,
                    properties
                )
            }
            if rc == MosquittoError.success { Self.record(messageID, qos: qos, in: &state.outstanding) }
            return rc
        }
        guard rc == MosquittoError.success else { throw Self.libraryError(operation: "publish", rc) }
        return messageID
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

    /// Publishes an MQTT 5 request: the receiver answers on `responseTopic` with `correlationData` (QoS 1).
    /// On MQTT 3.1.1 the properties do not exist and a plain QoS 1 message is sent.
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
        guard payload.count <= Self.maximumPayloadBytes else { throw Self.payloadTooLarge }
        let core = self.core
        let rc = try core.locked.withLock { (state) throws(BrokerError) -> Int32 in
            guard core.phase == .connected, let handle = state.handle else {
                throw Self.notConnected(operation: operation)
            }
            try Self.checkQueueRoom(state.outstanding, qos: 1, limit: core.maxQueuedMessages)
            var messageID: Int32 = 0
            let rc: Int32
            if state.protocolVersion == .v5 {
                let properties = MosquittoProperties()
                if let responseTopic {
                    try properties.addString(MQTT_PROP_RESPONSE_TOPIC, responseTopic, operation: operation)
                }
                if let correlationData {
                    try properties.addBinary(MQTT_PROP_CORRELATION_DATA, correlationData, operation: operation)
                }
                rc = topic.withCString { topicPointer in
                    payload.withUnsafeBytes { bytes in
                        mosquitto_publish_v5(
                            handle.pointer,
                            &messageID,
                            topicPointer,
                            Int32(bytes.count),
                            bytes.baseAddress,
                            1,
                            false,
                            properties.list
                        )
                    }
                }
            } else {
                rc = topic.withCString { topicPointer in
                    payload.withUnsafeBytes { bytes in
                        mosquitto_publish(
                            handle.pointer,
                            &messageID,
                            topicPointer,
                            Int32(bytes.count),
                            bytes.baseAddress,
                            1,
                            false
                        )
                    }
                }
            }
            if rc == MosquittoError.success { Self.record(messageID, qos: 1, in: &state.outstanding) }
            return rc
        }
        guard rc == MosquittoError.success else { throw Self.libraryError(operation: operation, rc) }
    }

    /// Sends one SUBSCRIBE for all `filters`. Subscriptions of a clean session end with the connection:
    /// subscribe again after each `.connected` (or use a persistent session and check `sessionPresent`).
    package func subscribe(_ filters: [String], qos: Int) throws(BrokerError) {
        guard (0...2).contains(qos) else { throw Self.invalidQoS(operation: "subscribe") }
        guard !filters.isEmpty else { return }
        // mosquitto_subscribe_multiple takes `char *const *`: C copies of the filters, freed after the call.
        let cFilters: [UnsafeMutablePointer<CChar>?] = filters.map { strdup($0) }
        defer { for filter in cFilters { free(filter) } }
        let core = self.core
        let rc = try core.locked.withLock { (state) throws(BrokerError) -> Int32 in
            guard core.phase == .connected, let handle = state.handle else {
                throw Self.notConnected(operation: "subscribe")
            }
            var messageID: Int32 = 0
            let rc = cFilters.withUnsafeBufferPointer { buffer in
                mosquitto_subscribe_multiple(
                    handle.pointer,
                    &messageID,
                    Int32(buffer.count),
                    buffer.baseAddress,
                    Int32(qos),
                    0,
                    nil
                )
            }
            if rc == MosquittoError.success { state.pendingSubscriptions[messageID] = (filters, Int32(qos)) }
            return rc
        }
        guard rc == MosquittoError.success else {
            throw BrokerError(
                operation: "subscribe to \(filters.joined(separator: ", "))",
                code: Int(rc),
                message: MosquittoLibrary.errorText(rc)
            )
        }
    }
}
