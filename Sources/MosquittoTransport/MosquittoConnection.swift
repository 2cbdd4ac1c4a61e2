import AgentPorts
internal import CMosquitto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection attempt and, if CONNACK accepts it, the connection: runs on its own network thread from
/// the attempt to the teardown, and is the context libmosquitto's callbacks receive as userdata.
///
/// `@unchecked Sendable`: the `let`s are Sendable or only used on the network thread; the `var`s are
/// written by callbacks, which libmosquitto runs on the thread calling `mosquitto_loop` — this one — and read
/// by the same thread between loop turns.
final class MosquittoConnection: @unchecked Sendable {
    let core: MosquittoClientCore
    let handle: MosquittoHandle
    let options: BrokerConnectOptions
    let endpoint: String
    private let connectProperties: MosquittoProperties?

    // Network thread only.
    /// The CONNACK code once it arrived; 0 is accepted.
    var connackCode: Int32?
    /// on_disconnect's code once the connection ended.
    var disconnectCode: Int32?
    /// Message ids on_publish reported this loop turn, settled in the ledger after the turn so that callbacks
    /// never take the client's lock.
    var completedMessageIDs: [Int32] = []
    /// First failing PUBACK/PUBCOMP reason (MQTT 5, ≥ 0x80) seen, logged after the loop turn.
    var publishFailureCode: Int32?
    private var publishFailureLogged = false
    /// SUBACKs of this loop turn: every answered message id, and those that refused some filters (their
    /// indices and the first reason code).
    var answeredSubscriptions: [Int32] = []
    var refusedSubscriptions: [(messageID: Int32, indices: [Int], code: UInt8)] = []
    /// Refused filters waiting to be subscribed again, and the back-off of the next refusal.
    private var retries: [(filters: [String], qos: Int32, due: ContinuousClock.Instant)] = []
    private var retryDelay: Duration = MosquittoConnection.firstSubscribeRetry
    /// A broker refusing a subscription for a while — NATS while JetStream elects the leaders its QoS 1
    /// subscriptions need after a node stopped — is asked again, 1 s after the refusal, doubling to 30 s.
    static let firstSubscribeRetry: Duration = .seconds(1)
    static let lastSubscribeRetry: Duration = .seconds(30)

    init(
        core: MosquittoClientCore,
        handle: MosquittoHandle,
        options: BrokerConnectOptions,
        connectProperties: MosquittoProperties?
    ) {
        self.core = core
        self.handle = handle
        self.options = options
        self.connectProperties = connectProperties
        endpoint = "\(options.host):\(options.port)"
        completedMessageIDs.reserveCapacity(1024)
    }

    /// libmosquitto's select() timeout per loop turn while no stop is requested. Anything to send (a publish, a
    /// subscribe from any thread) and anything received wake select() at once; the timeout only paces
    /// libmosquitto's keep-alive bookkeeping, which needs a turn a second at most. It was 100 ms: 10 of an idle
    /// agent's ~42 wake-ups a second (BENCHMARKS.md, "Fleet convergence"). A stop wakes the thread itself
    /// (`MosquittoClientCore.requestStop`).
    static let idleLoopTimeoutMilliseconds: Int32 = 1000
    /// The timeout once a stop is requested: bounds how late the flush deadline is noticed.
    static let stoppingLoopTimeoutMilliseconds: Int32 = 100
    /// How long a DISCONNECT may take to reach the socket before the socket is closed under it.
    static let disconnectWriteLimit: Duration = .seconds(1)

    /// The network thread's body. Every path ends in exactly one terminal event: `.connectFailed` if no
    /// CONNACK accepted the connection, otherwise `.disconnected`.
    func run() {
        let terminal = runUntilClosed()
        mosquitto_user_data_set(handle.pointer, nil)
        switch terminal {
        case .connectFailed(_, let reason, _):
            core.logger.debug("mqtt connect failed", metadata: ["mqtt.reason": "\(reason)"])
        case .disconnected(let reason, _):
            core.logger.debug("mqtt connection ended", metadata: ["mqtt.reason": "\(reason)"])
        default:
            break
        }
        core.connectionFinished(terminal)
    }

    private var cancelledEvent: BrokerEvent {
        .connectFailed(
            code: Int(MosquittoError.noConnection),
            reason: "connect to \(endpoint) cancelled by disconnect() before the broker accepted it",
            isAuthorization: false
        )
    }

    private func runUntilClosed() -> BrokerEvent {
        let mosq = handle.pointer
        if core.stopRequested.load(ordering: .acquiring) { return cancelledEvent }
        core.locked.withLock { $0.pendingSubscriptions.removeAll() }

        // Blocking TCP (and DNS) connect, on this thread only; the CONNECT packet is queued and the rest of
        // the handshake (TLS, CONNACK) is driven by mosquitto_loop below.
        let rc = options.host.withCString { host in
            mosquitto_connect_bind_v5(
                mosq,
                host,
                Int32(options.port),
                Int32(options.keepaliveSeconds),
                nil,
                connectProperties?.list
            )
        }
        let connectErrno = errno
        if rc != MosquittoError.success {
            return .connectFailed(
                code: Int(rc),
                reason: MosquittoReasons.connectCallFailed(rc, errno: connectErrno, endpoint: endpoint),
                isAuthorization: false
            )
        }

        let clock = ContinuousClock()
        var disconnectSentAt: ContinuousClock.Instant?
        // A second descriptor of the connection, taken as DISCONNECT is queued (see `closeAfterTheBroker`).
        var lingering: Int32 = -1
        defer { if lingering >= 0 { _ = close(lingering) } }
        while true {
            if core.stopRequested.load(ordering: .acquiring) {
                if let sentAt = disconnectSentAt {
                    if clock.now - sentAt > Self.disconnectWriteLimit {
                        closeSocket()
                        return connackCode == 0
                            ? .disconnected(
                                reason:
                                    "disconnected from \(endpoint): DISCONNECT was not written within 1 s, socket closed",
                                expected: true
                            )
                            : cancelledEvent
                    }
                } else if shouldSendDisconnect(now: clock.now) {
                    let socket = mosquitto_socket(mosq)
                    if socket >= 0 { lingering = dup(socket) }
                    // Reason 0, normal disconnection: the broker discards the will.
                    let rc = mosquitto_disconnect_v5(mosq, 0, nil)
                    if rc != MosquittoError.success {
                        closeSocket()
                        return connackCode == 0
                            ? .disconnected(reason: "disconnected from \(endpoint) (socket closed)", expected: true)
                            : cancelledEvent
                    }
                    disconnectSentAt = clock.now
                }
            }
            if disconnectSentAt != nil {
                // libmosquitto marks itself disconnected as soon as DISCONNECT is queued (threaded mode writes
                // it on the next turn), and from then on takes any packet it reads — an acknowledgement, a
                // command — for a protocol error that closes the socket with DISCONNECT unwritten: the broker
                // then sees a lost connection and publishes the will over the goodbye. So write only, until
                // DISCONNECT is out (libmosquitto then closes the socket and reports the end) or the limit.
                let writeRC = mosquitto_loop_write(mosq, 1)
                let writeErrno = errno
                if let code = disconnectCode {
                    if code == MosquittoError.success, lingering >= 0 {
                        closeAfterTheBroker(lingering, limit: Self.disconnectWriteLimit)
                        lingering = -1
                    }
                    return endedEvent(code: code, errno: writeErrno, requested: true)
                }
                if writeRC != MosquittoError.success {
                    core.setPhase(.closing)
                    closeSocket()
                    return endedEvent(code: writeRC, errno: writeErrno, requested: true)
                }
                waitUntilWritable(milliseconds: Self.stoppingLoopTimeoutMilliseconds)
                continue
            }

            let stopping = core.stopRequested.load(ordering: .acquiring)
            let loopRC = mosquitto_loop(
                mosq,
                stopping ? Self.stoppingLoopTimeoutMilliseconds : Self.idleLoopTimeoutMilliseconds,
                1
            )
            let loopErrno = errno
            settleCompletedMessages()
            retryRefusedSubscriptions(now: clock.now)

            if let code = connackCode, code != 0 {
                closeSocket()
                let (reason, isAuthorization) = MosquittoReasons.connackRefused(
                    code,
                    protocolVersion: options.protocolVersion,
                    endpoint: endpoint
                )
                return .connectFailed(code: Int(code), reason: reason, isAuthorization: isAuthorization)
            }
            if let code = disconnectCode {
                return endedEvent(code: code, errno: loopErrno, requested: disconnectSentAt != nil)
            }
            if loopRC != MosquittoError.success {
                // An error libmosquitto did not report through on_disconnect (select() failing, for one):
                // close the socket ourselves so the end is never silent.
                core.setPhase(.closing)
                closeSocket()
                return endedEvent(code: loopRC, errno: loopErrno, requested: disconnectSentAt != nil)
            }
        }
    }

    private func endedEvent(code: Int32, errno savedErrno: Int32, requested: Bool) -> BrokerEvent {
        guard connackCode == 0 else {
            if requested { return cancelledEvent }
            if options.protocolVersion == .v5, connackCode == nil, code == MosquittoError.connectionLost {
                // RabbitMQ 3.x answers an MQTT 5 CONNECT by closing the connection (its 3.1.1 parser fails on
                // the properties) instead of CONNACK 0x84: report it as the refusal it is, so that
                // mqtt.protocol: auto can fall back. A broker that died mid-handshake looks the same; auto
                // tries MQTT 5 again if the 3.1.1 attempt fails too.
                return .connectFailed(
                    code: Int(MosquittoReasons.unsupportedProtocolVersion),
                    reason: MosquittoReasons.closedOnMQTT5Connect(endpoint: endpoint, tls: options.tls != nil),
                    isAuthorization: false
                )
            }
            return .connectFailed(
                code: Int(code),
                reason: MosquittoReasons.endedBeforeConnack(code, errno: savedErrno, endpoint: endpoint),
                isAuthorization: false
            )
        }
        if requested {
            return .disconnected(reason: "disconnected from \(endpoint) as requested", expected: true)
        }
        return .disconnected(
            reason: MosquittoReasons.connectionLost(
                code,
                errno: savedErrno,
                keepaliveSeconds: options.keepaliveSeconds,
                endpoint: endpoint
            ),
            expected: false
        )
    }

    /// DISCONNECT goes out once everything queued has been written (QoS 0) or acknowledged (QoS > 0), or
    /// when the flush deadline passes, or at once if the broker has not accepted the connection yet.
    /// Settles this turn's SUBACKs and subscribes again to the filters a broker refused, once they are due. A
    /// refused subscription would otherwise leave the agent deaf to its commands and desired state until the
    /// next reconnection; the retained messages of a filter come with its successful SUBSCRIBE.
    private func retryRefusedSubscriptions(now: ContinuousClock.Instant) {
        if !answeredSubscriptions.isEmpty {
            let refused = refusedSubscriptions
            let newlyRefused = core.locked.withLock { state -> [([String], Int32, UInt8)] in
                var found: [([String], Int32, UInt8)] = []
                for entry in refused {
                    guard let pending = state.pendingSubscriptions[entry.messageID] else { continue }
                    let filters = entry.indices.filter { $0 < pending.filters.count }.map { pending.filters[$0] }
                    if !filters.isEmpty { found.append((filters, pending.qos, entry.code)) }
                }
                for id in answeredSubscriptions { state.pendingSubscriptions[id] = nil }
                return found
            }
            answeredSubscriptions.removeAll(keepingCapacity: true)
            refusedSubscriptions.removeAll(keepingCapacity: true)
            for (filters, qos, code) in newlyRefused {
                core.logger.warning(
                    "\(endpoint) refused the subscription to \(filters.joined(separator: ", ")) (SUBACK 0x\(String(code, radix: 16))) — subscribing again in \(retryDelay)"
                )
                retries.append((filters, qos, now + retryDelay))
                retryDelay = min(retryDelay * 2, Self.lastSubscribeRetry)
            }
            if newlyRefused.isEmpty && retries.isEmpty { retryDelay = Self.firstSubscribeRetry }
        }
        guard connackCode == 0, retries.contains(where: { $0.due <= now }) else { return }
        let due = retries.filter { $0.due <= now }
        retries.removeAll { $0.due <= now }
        for retry in due {
            let cFilters: [UnsafeMutablePointer<CChar>?] = retry.filters.map { strdup($0) }
            defer { for filter in cFilters { free(filter) } }
            var messageID: Int32 = 0
            let rc = cFilters.withUnsafeBufferPointer { buffer in
                mosquitto_subscribe_multiple(
                    handle.pointer,
                    &messageID,
                    Int32(buffer.count),
                    buffer.baseAddress,
                    retry.qos,
                    0,
                    nil
                )
            }
            if rc == MosquittoError.success {
                core.locked.withLock { $0.pendingSubscriptions[messageID] = (retry.filters, retry.qos) }
            } else {
                retries.append((retry.filters, retry.qos, now + retryDelay))
            }
        }
    }

    private func shouldSendDisconnect(now: ContinuousClock.Instant) -> Bool {
        core.locked.withLock { state in
            guard connackCode == 0 else { return true }
            if let deadline = state.stopDeadline, now >= deadline { return true }
            return state.outstanding.isEmpty
        }
    }

    private func settleCompletedMessages() {
        if !completedMessageIDs.isEmpty {
            // Keep, in place, the ids that were QoS > 0 acknowledgements: those go to the handler.
            var acknowledged = 0
            let handler = core.locked.withLock { state in
                for index in completedMessageIDs.indices where state.outstanding.complete(completedMessageIDs[index]) {
                    completedMessageIDs[acknowledged] = completedMessageIDs[index]
                    acknowledged += 1
                }
                return state.acknowledgementHandler
            }
            // Outside the client's lock: the handler takes its own, and a publisher holding that one may be
            // inside `publish`, which takes the client's.
            if acknowledged > 0 { handler?.brokerAcknowledged(completedMessageIDs[0..<acknowledged]) }
            completedMessageIDs.removeAll(keepingCapacity: true)
        }
        if let code = publishFailureCode, !publishFailureLogged {
            publishFailureLogged = true
            core.logger.warning(
                "mqtt broker refused a published message",
                metadata: [
                    "mqtt.reason": "\(MosquittoLibrary.reasonText(code)) (0x\(String(code, radix: 16)))",
                    "mqtt.broker": "\(endpoint)",
                ]
            )
        }
    }

    /// Closes the connection after DISCONNECT the way the broker needs to see it. libmosquitto closes its
    /// descriptor right after writing DISCONNECT; with bytes from the broker still unread, the kernel would
    /// answer with a reset instead of a FIN, and a broker whose write fails on that reset before it reads the
    /// DISCONNECT takes the connection for lost and publishes the will ("disconnected: Broken pipe" in
    /// mosquitto's log). `descriptor`, a duplicate, keeps the connection open past libmosquitto's close: send
    /// the FIN, discard what the broker still sends until it closes its side (it does on DISCONNECT), then close.
    private func closeAfterTheBroker(_ descriptor: Int32, limit: Duration) {
        #if canImport(Glibc)
        _ = shutdown(descriptor, Int32(SHUT_WR))
        #else
        _ = shutdown(descriptor, SHUT_WR)
        #endif
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { buffer in
            while clock.now < deadline {
                let milliseconds = Int32((deadline - clock.now) / .milliseconds(1))
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, max(1, milliseconds)) > 0 else { return }
                if read(descriptor, buffer.baseAddress, buffer.count) <= 0 { return }
            }
        }
        _ = close(descriptor)
    }

    /// Blocks until the socket can take more bytes, or `milliseconds` pass.
    private func waitUntilWritable(milliseconds: Int32) {
        let socket = mosquitto_socket(handle.pointer)
        guard socket >= 0 else { return }
        var descriptor = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
        _ = poll(&descriptor, 1, milliseconds)
    }

    /// Ends the TCP connection without a DISCONNECT. libmosquitto has no call for that, so shut the socket
    /// down and let one more loop turn see EOF and close its side (its on_disconnect is then ignored).
    private func closeSocket() {
        let socket = mosquitto_socket(handle.pointer)
        guard socket >= 0 else { return }
        #if canImport(Glibc)
        _ = shutdown(socket, Int32(SHUT_RDWR))
        #else
        _ = shutdown(socket, SHUT_RDWR)
        #endif
        _ = mosquitto_loop(handle.pointer, 10, 1)
    }
}
