import AgentPorts

/// An MQTT broker in memory, for running the agent on simulated time: what mosquitto 2.0 does that the agent
/// relies on, with its clients (`MemoryBrokerClient`, the `BrokerClient` port) on a network that moves only when
/// `pump()` is called. A contract suite (Tests/BrokerContractTests) runs the same cases against a real mosquitto
/// and this broker, so the two cannot drift apart unnoticed.
///
/// What it models:
/// - Topic filters with `+` and `#` (a leading wildcard does not match `$` topics); overlapping subscriptions give an
///   MQTT 5 client one copy per matching subscription, an MQTT 3.1.1 client one copy (as mosquitto 2.0.11 does).
/// - Retained messages: set, replaced, deleted by an empty payload, expiring; sent with the retain flag on every
///   SUBSCRIBE, a repeated one too; forwarded live without it.
/// - QoS 0 and 1 with the minimum of the published and the subscribed QoS; PUBACKs; a per-client window of
///   `maxInflightMessages` QoS 1 messages in flight; unacknowledged ones sent again (DUP) when a persistent session
///   reconnects. The client resends its own unacknowledged QoS 1 messages on its next connection, as libmosquitto
///   does with the same handle.
/// - Clean and persistent sessions (subscriptions and QoS 1 messages kept while offline, up to
///   `maxQueuedMessages`; QoS 0 not kept), MQTT 5 session expiry, `sessionPresent`, client id takeover.
/// - Per-client queue limit as mosquitto 2.0.11's db__message_insert applies `max_queued_messages`: QoS 1 beyond the
///   window queues up to the limit, then is dropped; QoS 0 to a connected client is dropped once that many packets
///   wait on its connection beyond what it reads at its next turn; offline, QoS 1 is held up to the limit in all.
///   Every drop is counted (`drops(clientID:)`).
/// - Wills, published (retained when flagged) when a connection ends without DISCONNECT: `dropConnection`,
///   `MemoryBrokerClient.kill()`, a takeover, and — as mosquitto does on SIGTERM — `stop()`; never on DISCONNECT,
///   never by a killed broker (`kill()`).
/// - MQTT 5 properties the agent uses: response topic and correlation data passed through, message expiry (queued
///   and retained messages expire; sent with the remaining interval), Maximum Packet Size (a larger packet is not
///   sent, and counted; a QoS 1 one keeps its in-flight slot until the client reconnects, as in mosquitto 2.0.11).
///   An MQTT 3.1.1 client gets none of them.
/// - Credentials (`users`): a refusal is a CONNACK refusal with isAuthorization.
/// - Time: every packet moves one hop per pump (client → broker, broker → client), after `latencySeconds`;
///   a client reads at most `readsPerPump` PUBLISH packets per pump (a slow consumer); a connection can be cut at
///   any point (`dropConnection`, `stop`, `kill`) and loses what was on its wires, or stalled in one direction.
///
/// What it does not model: TLS (options.tls is accepted and ignored), ACLs, QoS 2's four-packet flow (a QoS 2
/// message travels as QoS 1 does: one acknowledgement, duplicates possible on a resend), keepalive and PINGs (a
/// hung peer is a stalled connection, not a timeout), SUBACK/UNSUBACK (subscriptions are in place when the
/// SUBSCRIBE arrives, and never refused), unsubscribing, shared subscriptions, will delay, message_size_limit,
/// max_queued_bytes, queue_qos0_messages, user properties and the other MQTT 5 properties, $SYS topics, bridges,
/// and a broker killed between autosaves (a stop keeps or loses the whole store: `restart(keepingStore:)`).
///
/// Locking: one lock for the whole network. Client calls (`publish` …) only queue packets; a pump moves them and,
/// after releasing the lock, hands events to `events` and acknowledgements to the handler — never from inside
/// `publish`, so a publisher holding its own lock across `publish` (OutboxPublisher) cannot deadlock.
package final class MemoryBroker: Sendable {
    /// The host clients dial to reach this broker.
    package let name: String
    package let network: MemoryNetwork
    let index: Int

    /// A broker on a network of its own, on the clock `now` (seconds).
    package convenience init(name: String, options: Options = Options(), now: @escaping @Sendable () -> Double) {
        self.init(name: name, options: options, network: MemoryNetwork(now: now))
    }

    /// A broker on a shared network (failover between brokers, one clock). It starts running.
    package init(name: String, options: Options = Options(), network: MemoryNetwork) {
        self.name = name
        self.network = network
        index = network.world.withLock { world in
            world.brokers.append(BrokerState(name: name, options: options))
            return world.brokers.count - 1
        }
    }

    package var options: Options { network.world.withLock { $0.brokers[index].options } }

    package var port: Int { options.port }

    package var isRunning: Bool { network.world.withLock { $0.brokers[index].running } }

    // MARK: Controls

    /// Starts accepting connections again (with the store `stop` left).
    package func start() {
        network.world.withLock { $0.brokers[index].running = true }
    }

    /// The broker shuts down as mosquitto does on SIGTERM: it publishes the wills of its connected clients (into
    /// the retained store and the queues of offline persistent sessions; the connected clients do not get them),
    /// then every connection ends (clients get `.disconnected(expected: false)`, or `.connectFailed` if not yet
    /// accepted), and the store — retained messages and persistent sessions with what they are owed — is kept only
    /// with `options.persistence`.
    package func stop() {
        stop(keepingStore: nil, publishingWills: true)
    }

    /// The broker process is killed (SIGKILL): as `stop()`, but no will is published.
    package func kill() {
        stop(keepingStore: nil, publishingWills: false)
    }

    /// `stop()` (or `kill()`, when not `graceful`) then `start()`, keeping the retained messages and persistent
    /// sessions or losing them whatever `options.persistence` says.
    package func restart(keepingStore: Bool, graceful: Bool = true) {
        stop(keepingStore: keepingStore, publishingWills: graceful)
        start()
    }

    /// `stop()` (or `kill()`, when not `graceful`), keeping the store or losing it whatever `options.persistence`
    /// says (a broker whose store file went missing, or one killed between autosaves).
    package func stop(keepingStore: Bool, graceful: Bool = true) {
        stop(keepingStore: Optional(keepingStore), publishingWills: graceful)
    }

    private func stop(keepingStore: Bool?, publishingWills: Bool) {
        let broker = index
        network.mutate { world, now, effects in
            guard world.brokers[broker].running else { return }
            if publishingWills {
                // mosquitto's main() after its loop ends: context__send_will for every client, then the last save.
                for session in world.brokers[broker].sessions.indices {
                    guard world.brokers[broker].sessions[session].connection != nil,
                        let will = world.brokers[broker].sessions[session].will
                    else { continue }
                    world.brokers[broker].sessions[session].will = nil
                    world.accept(
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
            world.brokers[broker].running = false
            for id in world.connections.filter({ $0.broker == broker }).map(\.id) {
                world.cut(id, publishWill: false, now: now, effects: &effects)
            }
            if !(keepingStore ?? world.brokers[broker].options.persistence) {
                world.brokers[broker].retained.removeAll()
                world.brokers[broker].sessions.removeAll()
            }
        }
    }

    /// A network fault on `clientID`'s connection (or connection attempt): what is on its wires is lost, the client
    /// sees its connection drop, the broker publishes the will.
    package func dropConnection(clientID: String) {
        let broker = index
        network.mutate { world, now, effects in
            for id in Self.connections(of: clientID, broker: broker, in: world) {
                world.cut(id, publishWill: true, now: now, effects: &effects)
            }
        }
    }

    /// Stalls (or resumes) `clientID`'s current connection in either direction: a stalled direction moves nothing
    /// (packets wait on it), as when a peer stops reading or a network path hangs.
    package func setStalled(clientID: String, towardsBroker: Bool, towardsClient: Bool) {
        let broker = index
        network.world.withLock { world in
            for id in Self.connections(of: clientID, broker: broker, in: world) {
                guard let position = world.connectionIndex(id) else { continue }
                world.connections[position].stalledUp = towardsBroker
                world.connections[position].stalledDown = towardsClient
            }
        }
    }

    private static func connections(of clientID: String, broker: Int, in world: MemoryWorld) -> [Int] {
        world.connections.filter { connection in
            connection.broker == broker
                && (connection.sessionClientID == clientID
                    || (connection.sessionClientID == nil && connection.options.clientID == clientID))
        }.map(\.id)
    }

    // MARK: Observation

    package func retainedMessage(topic: String) -> RetainedMessage? {
        network.world.withLock { world in
            world.brokers[index].retained[topic].map {
                RetainedMessage(
                    topic: $0.topic,
                    payload: $0.payload,
                    qos: $0.qos,
                    responseTopic: $0.responseTopic,
                    correlationData: $0.correlationData,
                    expiresAt: $0.expiresAt
                )
            }
        }
    }

    /// Topics with a retained message, sorted (expired ones included until something looks them up).
    package var retainedTopics: [String] {
        network.world.withLock { $0.brokers[index].retainedTopicsInOrder() }
    }

    /// What the broker dropped for `clientID` so far.
    package func drops(clientID: String) -> Drops {
        network.world.withLock { $0.brokers[index].drops[clientID] ?? Drops() }
    }

    /// Client ids with an accepted connection, in session creation order.
    package var connectedClientIDs: [String] {
        network.world.withLock { world in
            world.brokers[index].sessions.filter { $0.connection != nil }.map(\.clientID)
        }
    }

    /// Client ids with a session (connected or offline and not expired), in creation order.
    package var sessionClientIDs: [String] {
        let now = network.now()
        return network.world.withLock { world in
            world.brokers[index].sessions.filter { !$0.hasExpired(at: now) }.map(\.clientID)
        }
    }

    /// QoS > 0 messages the broker holds for `clientID` (in flight and queued); nil without a session.
    package func heldMessageCount(clientID: String) -> Int? {
        network.world.withLock { world in
            world.brokers[index].sessions.first { $0.clientID == clientID }.map { $0.inflight.count + $0.queued.count }
        }
    }

    /// Called (outside the network's lock, during the pump that brought it) for every PUBLISH the broker takes
    /// from a client — acknowledged, for QoS 1: where a publisher's responsibility for the message ends; nil stops
    /// the calls.
    package func setPublishObserver(_ observer: (@Sendable (Publication) -> Void)?) {
        network.world.withLock { $0.brokers[index].publishObserver = observer }
    }

    /// Called (outside the network's lock, during the pump that sent it) for every PUBLISH the broker sends a
    /// client; nil stops the calls.
    package func setDeliveryObserver(_ observer: (@Sendable (Delivery) -> Void)?) {
        network.world.withLock { $0.brokers[index].observer = observer }
    }

    // MARK: Time

    /// One network turn, for every broker and client of this broker's network: each packet sent before the turn
    /// and due (after `latencySeconds`) moves one hop — client → broker on every connection first, then broker →
    /// client (at most `readsPerPump` PUBLISH packets per client) — then clients whose `disconnect` flush is done
    /// (or past its deadline) send DISCONNECT. Connections are visited in creation order. After the lock is
    /// released, events go into the clients' `events` and each client's acknowledgements go to its handler in one
    /// batch. Returns whether anything moved.
    @discardableResult
    package func pump() -> Bool {
        network.pump()
    }

    /// The earliest time at which a pump would move something; nil when nothing is pending.
    package var nextDueTime: Double? { network.nextDueTime }

    // MARK: Clients

    /// A client on this broker's network (it reaches any broker of the network by `host` = name and `port`).
    /// - Parameters:
    ///   - eventBacklogLimit, eventBacklogBytes: the bounds of `events`, as MosquittoClient's.
    ///   - maxQueuedMessages: QoS > 0 messages awaiting acknowledgement, and separately QoS 0 messages not yet
    ///     written, beyond which `publish` refuses (MosquittoClient's bound).
    ///   - readsPerPump: PUBLISH packets the client reads from its connection per pump; fewer makes a slow
    ///     consumer, whose backlog then waits at the broker (and is dropped past `maxQueuedMessages`).
    package func makeClient(
        eventBacklogLimit: Int = 16_384,
        eventBacklogBytes: Int = 64 << 20,
        maxQueuedMessages: Int = 20_000,
        readsPerPump: Int = .max
    ) -> MemoryBrokerClient {
        MemoryBrokerClient(
            network: network,
            eventBacklogLimit: eventBacklogLimit,
            eventBacklogBytes: eventBacklogBytes,
            maxQueuedMessages: maxQueuedMessages,
            readsPerPump: readsPerPump
        )
    }

    /// Connect options that reach this broker.
    package func connectOptions(
        clientID: String,
        protocolVersion: MQTTProtocolVersion = .v5,
        cleanSession: Bool = true,
        username: String? = nil,
        password: String? = nil,
        will: BrokerWill? = nil,
        maximumPacketSize: Int? = nil
    ) -> BrokerConnectOptions {
        BrokerConnectOptions(
            host: name,
            port: port,
            clientID: clientID,
            protocolVersion: protocolVersion,
            cleanSession: cleanSession,
            username: username,
            password: password,
            will: will,
            maximumPacketSize: maximumPacketSize
        )
    }
}
