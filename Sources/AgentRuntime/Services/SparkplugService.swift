import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionWire
import ServiceLifecycle
import SparkplugB
import Synchronization

/// The agent as a Sparkplug B edge node (`sparkplug.enabled`, docs/sparkplug.md): performs what
/// `SparkplugEdgeNode` decides over a connection of its own — the same servers, credentials, TLS and back-off as
/// the native one, but its own client id, Clean Start, Session Expiry 0 and the NDEATH as its will (MQTT has one
/// will per connection, and the native one is the retained offline status).
///
/// Data flows one way: the streams record into `SparkplugLane` on the acquisition thread; a drainer thread here
/// takes the lane's bodies only while the node is born, stamps them (`seq`, payload timestamp; `is_historical`
/// for what was queued before the current birth) and hands them to MQTT. `seq` advances only when the client
/// took a message, so an outage leaves no gap. Hosts' writes enter by the control door as commands with source
/// "sparkplug" (`ControlPlane.handleUnsigned`); their outcome goes back to the node, which reports it in NDATA.
/// With `OutboxPublisher.Drive.turns` there is no drainer thread: whoever runs the agent calls `drainTurn()`
/// (the simulation, whose seeds a thread would make irreproducible).
package final class SparkplugService: Service, Sendable {
    typealias Node = SparkplugEdgeNode<AgentMonotonicClock>

    private struct Session {
        var node: Node
        var sequence = SparkplugSequence()
        var flowing = false
        /// Lane messages with an outbox sequence up to this one were queued before the current birth: they go
        /// out `is_historical`.
        var historicalThrough: UInt64 = 0
        var will: BrokerWill?
        var out: [UInt8] = []
        var stopping = false
        /// The settings last recorded per carried stream, to notice changes.
        var settings: [StreamName: AgentStatus.Stream] = [:]
    }

    /// What the node decided that must happen outside the session's lock.
    private enum Deferred {
        case write(SparkplugWrite)
        case disconnect(moveToNextServer: Bool)
        case wait(AgentMonotonicClock.Instant)
    }

    private enum Input {
        /// What the connection did, for the supervisor.
        case connection(Supervisor.Event)
        case message(InboundMessage)
        /// A node timer's deadline (a coalesced rebirth).
        case tick
        case shutdown
    }

    private typealias Supervisor = ConnectionSupervisor<AgentMonotonicClock>

    private let mqtt: MQTTSettings
    private let deviceID: String
    private let baseOptions: BrokerConnectOptions
    private let broker: BrokerClient
    private let lane: SparkplugLane
    private let controller: AgentController
    private let control: ControlPlane
    private let status: StatusPublisher
    private let state: any StateDirectory
    private let startup: AgentStartup
    private let drainTimeout: Double
    private let drive: OutboxPublisher.Drive
    /// The DDATA topic of each carried stream, by the lane's topic id.
    private let dataTopics: [String]
    private let backoffSeed: UInt64
    private let clock: any AgentClock
    /// Where its unstructured tasks run (`AgentBuilder.Options.taskExecutor`).
    private let taskExecutor: (any TaskExecutor)?
    private let logger: Logger
    private let session: Mutex<Session>
    private let feed: AsyncStream<Input>.Continuation
    private let inputs: AsyncStream<Input>
    private let commandCounter = Atomic<UInt64>(0)

    init(
        configuration: AgentConfiguration,
        baseOptions: BrokerConnectOptions,
        broker: BrokerClient,
        lane: SparkplugLane,
        controller: AgentController,
        control: ControlPlane,
        status: StatusPublisher,
        state: any StateDirectory,
        startup: AgentStartup,
        drainTimeout: Double,
        drive: OutboxPublisher.Drive = .threads,
        backoffSeed: UInt64,
        clock: any AgentClock,
        taskExecutor: (any TaskExecutor)?,
        logger: Logger
    ) throws(SparkplugError) {
        self.taskExecutor = taskExecutor
        self.drive = drive
        dataTopics = lane.catalog.devices.map { device in
            SparkplugTopic(
                groupID: configuration.sparkplug.groupID,
                messageType: .deviceData,
                edgeNodeID: configuration.device.id,
                deviceID: device.id
            ).description
        }
        self.backoffSeed = backoffSeed
        self.clock = clock
        let sparkplug = configuration.sparkplug
        mqtt = configuration.mqtt
        deviceID = configuration.device.id
        var options = baseOptions
        // Sparkplug 3.0 (4.1.1, 5.x): a clean session that ends with the connection, and a client id of its own
        // beside the native connection's.
        options.clientID = baseOptions.clientID + "-sparkplug"
        options.cleanSession = true
        options.sessionExpirySeconds = 0
        options.will = nil
        self.baseOptions = options
        self.broker = broker
        self.lane = lane
        self.controller = controller
        self.control = control
        self.status = status
        self.state = state
        self.startup = startup
        self.drainTimeout = drainTimeout
        self.logger = logger
        let last = Self.lastBirthDeathSequence(state, logger: logger)
        let node = Node(
            configuration: try .init(
                groupID: sparkplug.groupID,
                edgeNodeID: configuration.device.id,
                primaryHostID: sparkplug.primaryHostID,
                writes: sparkplug.writes
                    ? .allowed : .refused(reason: "writes are off on this device (sparkplug.writes: false)")
            ),
            catalog: lane.catalog,
            lastBirthDeathSequence: last,
            clock: clock.monotonic,
            wallClockMs: { [clock] in clock.realtimeMilliseconds() }
        )
        session = Mutex(Session(node: node))
        (inputs, feed) = AsyncStream<Input>.makeStream()
    }

    private func nowMs() -> UInt64 { clock.realtimeMilliseconds() }

    /// The bdSeq the previous run persisted; nil on a first start or when the file is unreadable (said).
    private static func lastBirthDeathSequence(_ state: any StateDirectory, logger: Logger) -> UInt8? {
        do {
            guard let bytes = try state.read(.sparkplugBirthDeathSequence) else { return nil }
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = UInt8(text) else {
                logger.warning(
                    "\(state.location(of: .sparkplugBirthDeathSequence)) does not hold a bdSeq (0–255): Sparkplug starts again at 0"
                )
                return nil
            }
            return value
        } catch {
            logger.warning("cannot read the Sparkplug bdSeq: \(error) — Sparkplug starts again at 0")
            return nil
        }
    }

    /// The connection runs on `ConnectionSupervisor`, as the native one does — the same back-off, failover,
    /// protocol fallback and Server References; only what follows a CONNACK (the node's births and
    /// subscriptions) and the goodbye (NDEATH) are Sparkplug's. The node may end a connection itself (its
    /// primary host went offline): the supervisor's `leave` then closes it and picks the next server.
    package func run() async throws {
        guard await startup.bootCount() != nil else { return }
        let (feed, clock, logger) = (self.feed, self.clock, self.logger)
        let endpoints = mqtt.endpoints
        var supervisor = Supervisor(
            clock: clock.monotonic,
            backoff: Backoff(
                base: mqtt.reconnectMinDelay,
                cap: mqtt.reconnectMaxDelay,
                seed: backoffSeed,
                jitter: mqtt.reconnectJitter == .equal ? .equal : .full
            ),
            servers: endpoints.map(\.description),
            protocolVersion: mqtt.protocolVersion == .v311 ? .v311 : .v5,
            protocolFallback: mqtt.protocolVersion == .auto
        )
        syncStreams()
        if drive == .threads {
            let drainer = Thread { [self] in drain() }
            drainer.name = "sparkplug-publisher"
            drainer.start()
        }
        let defaultPort = mqtt.port
        let forwarder = Task(executorPreference: taskExecutor) { [broker, feed] in
            for await event in broker.events {
                if case .message(let message) = event {
                    feed.yield(.message(message))
                } else if let event = Supervisor.event(for: event, defaultPort: defaultPort) {
                    feed.yield(.connection(event))
                }
            }
        }
        let poller = Task(executorPreference: taskExecutor) { [self] in
            while !Task.isCancelled {
                try? await clock.sleep(seconds: 1)
                syncStreams()
            }
        }
        var timer: Task<Void, Never>?

        /// Performs what the node left for outside the lock.
        func performNode(_ deferred: [Deferred]) async -> Bool {
            var closed = false
            for action in deferred {
                switch action {
                case .write(let write):
                    // An outcome is reported, never applied: its follow-ups are NDATA and at most a timer.
                    startTimers(handle(.writeOutcome(write, refusal: apply(write))))
                case .disconnect(let moveToNextServer):
                    // At the goodbye the supervisor's own DISCONNECT follows the NDEATH.
                    guard !session.withLock({ $0.stopping }) else { continue }
                    let reason = "the edge node left \(supervisor.servers[supervisor.server])"
                    closed = await performConnection(
                        supervisor.handle(.leave(reason: reason, nextServer: moveToNextServer))
                    )
                case .wait:
                    startTimers([action])
                }
            }
            return closed
        }

        /// Performs what the supervisor decided; returns true once the connection has been closed for good.
        func performConnection(_ actions: [Supervisor.Action]) async -> Bool {
            var closed = false
            for action in actions {
                switch action {
                case .connect:
                    let deferred = handle(.connecting(server: supervisor.server))
                    var options = baseOptions
                    let endpoint = endpoints[supervisor.server]
                    options.host = endpoint.host
                    options.port = endpoint.port
                    options.protocolVersion = supervisor.protocolVersion
                    options.will = session.withLock { $0.will }
                    do {
                        try broker.connect(options)
                        logger.info(
                            "Sparkplug: connecting to mqtt://\(endpoint) as \(options.clientID) (group \(session.withLock { $0.node.configuration.groupID }))"
                        )
                    } catch {
                        feed.yield(
                            .connection(
                                .connectFailed(
                                    reason: "cannot connect to \(endpoint): \(error)",
                                    isAuthorization: false
                                )
                            )
                        )
                    }
                    closed = await performNode(deferred) || closed
                case .log(let level, let message):
                    logger.log(level: level, "Sparkplug: \(message)")
                case .publishBirth:
                    closed = await performNode(handle(.connected)) || closed
                case .setPublisherConnected(let up):
                    if !up { closed = await performNode(handle(.disconnected)) || closed }
                case .wait(let deadline):
                    timer?.cancel()
                    timer = Task(executorPreference: taskExecutor) {
                        try? await clock.monotonic.sleep(until: deadline, tolerance: nil)
                        feed.yield(.connection(.tick))
                    }
                case .publishGoodbye:
                    // The NDEATH; the node's DISCONNECT is left to the supervisor's, next.
                    _ = await performNode(handle(.shutdown))
                case .disconnect:
                    await broker.disconnect(flushTimeout: drainTimeout)
                    closed = true
                case .closeConnection:
                    await broker.disconnect(flushTimeout: 1)
                case .subscribeControl, .writeHealth, .reportConnected, .reportConnectFailed:
                    // The node subscribes at its birth; health.json and the connection counters are the native
                    // connection's.
                    continue
                }
            }
            return closed
        }

        var finished = false
        await withGracefulShutdownHandler {
            feed.yield(.connection(.start))
            for await input in inputs {
                switch input {
                case .connection(let event):
                    finished = await performConnection(supervisor.handle(event))
                case .message(let message):
                    finished = await performNode(handle(.message(topic: message.topic, payload: message.payload)))
                case .tick:
                    finished = await performNode(handle(.tick))
                case .shutdown:
                    session.withLock { $0.stopping = true }
                    finished = await performConnection(supervisor.handle(.shutdown))
                }
                if finished { break }
            }
        } onGracefulShutdown: { [feed] in
            feed.yield(.shutdown)
        }
        if !finished {
            // Cancelled rather than shut down gracefully: still say goodbye.
            session.withLock { $0.stopping = true }
            _ = await performConnection(supervisor.handle(.shutdown))
        }
        timer?.cancel()
        poller.cancel()
        feed.finish()
        lane.outbox.close()
        forwarder.cancel()
        await forwarder.value
    }

    // MARK: The node's actions

    /// Runs one event through the node and performs its actions in order; what may not run under the session's
    /// lock (the control door, DISCONNECT, timers) comes back.
    private func handle(_ event: Node.Event) -> [Deferred] {
        session.withLock { session in
            var deferred: [Deferred] = []
            for action in session.node.handle(event) {
                perform(action, session: &session, deferred: &deferred)
            }
            return deferred
        }
    }

    private func perform(_ action: Node.Action, session: inout Session, deferred: inout [Deferred]) {
        switch action {
        case .persistBirthDeathSequence(let bdSeq):
            do {
                try state.replace(.sparkplugBirthDeathSequence, with: Array("\(bdSeq)\n".utf8))
            } catch {
                logger.error(
                    "cannot keep the Sparkplug bdSeq in \(state.location(of: .sparkplugBirthDeathSequence)): \(error) — after a restart the NBIRTH may repeat a bdSeq a host saw die; make agent.state_dir writable"
                )
            }
        case .setWill(let message):
            session.will = BrokerWill(topic: message.topic.description, payload: message.body, qos: 1, retain: false)
        case .subscribe(let topic):
            do {
                try broker.subscribe([topic], qos: 1)
            } catch {
                logger.error("Sparkplug: cannot subscribe to \(topic): \(error)")
            }
        case .publishBirthSequence(let birth, let devices):
            publish(topic: birth.topic.description, body: birth.body, type: .nodeBirth, session: &session)
            for id in devices { deviceBirth(id, session: &session) }
        case .publishDeviceBirth(let id):
            deviceBirth(id, session: &session)
        case .publish(let message):
            publish(topic: message.topic.description, body: message.body, type: message.type, session: &session)
        case .setDataFlowing(let flowing):
            session.flowing = flowing
            // What the lane holds now was measured before this birth: it goes out historical.
            if flowing { session.historicalThrough = lane.outbox.snapshot.enqueued }
            lane.outbox.wake()
        case .write(let write):
            deferred.append(.write(write))
        case .disconnect(let moveToNextServer):
            session.flowing = false
            deferred.append(.disconnect(moveToNextServer: moveToNextServer))
        case .wait(let deadline):
            deferred.append(.wait(deadline))
        case .log(let level, let text):
            logger.log(level: level, "\(text)")
        }
    }

    private func deviceBirth(_ id: String, session: inout Session) {
        guard let body = lane.deviceBirth(id) else { return }
        publish(
            topic: session.node.topic(.deviceBirth, device: id).description,
            body: body,
            type: .deviceBirth,
            session: &session
        )
    }

    /// Stamps and hands one message to MQTT; returns whether the client took it (only then does `seq` advance).
    @discardableResult
    private func publish(
        topic: String,
        body: UnsafeRawBufferPointer,
        type: SparkplugMessageType,
        historical: Bool,
        session: inout Session
    ) -> Bool {
        var sequence = session.sequence
        let seq = sequence.next(for: type)
        do {
            try SparkplugStamp.finish(
                body: body,
                timestampMs: nowMs(),
                seq: seq,
                historical: historical,
                into: &session.out
            )
            _ = try session.out.withUnsafeBytes { bytes in
                try broker.publish(topic: topic, payload: bytes, qos: type == .nodeDeath ? 1 : 0, retain: false)
            }
            session.sequence = sequence
            return true
        } catch {
            logger.debug("Sparkplug: \(type.rawValue) on \(topic) not sent: \(error)")
            return false
        }
    }

    private func publish(topic: String, body: [UInt8], type: SparkplugMessageType, session: inout Session) {
        body.withUnsafeBytes { _ = publish(topic: topic, body: $0, type: type, historical: false, session: &session) }
    }

    // MARK: Data

    /// What one turn of the drainer did.
    package enum DrainTurn: Sendable, Equatable {
        /// The agent is stopping: no more turns.
        case stopped
        /// The node is not born: the lane keeps the newest (bounded), the node sends nothing.
        case held
        /// One DDATA went to the client.
        case sent
        /// The oldest body stayed in the lane (the client did not take it, or the birth ended meanwhile).
        case kept
        /// The lane is empty.
        case idle
    }

    /// The drainer thread: the lane's DDATA bodies, while the node is born, in order.
    private func drain() {
        while true {
            switch drainStep(timeout: 0.25) {
            case .stopped: return
            case .held, .kept: Thread.sleep(forTimeInterval: 0.05)
            case .sent, .idle: continue
            }
        }
    }

    /// One turn of the drainer without waiting (`Drive.turns`): the caller turns again while it sends.
    package func drainTurn() -> DrainTurn { drainStep(timeout: 0) }

    private func drainStep(timeout: Double) -> DrainTurn {
        let (flowing, stopping) = session.withLock { ($0.flowing, $0.stopping) }
        if stopping { return .stopped }
        guard flowing else { return .held }
        var kept = false
        let took = lane.outbox.withOldest(timeout: timeout) { message in
            session.withLock { session -> Outbox.Disposition in
                guard session.flowing, message.topicID < dataTopics.count else {
                    kept = true
                    return .keep
                }
                let sent = publish(
                    topic: dataTopics[message.topicID],
                    body: message.payload,
                    type: .deviceData,
                    historical: message.sequence <= session.historicalThrough,
                    session: &session
                )
                if !sent { kept = true }
                return sent ? .published : .keep
            }
        }
        if kept { return .kept }
        return took ? .sent : .idle
    }

    /// Records the carried streams' settings in the lane (their `config/…` metrics) and their sensors'
    /// presence in the node (DDEATH / DBIRTH).
    private func syncStreams() {
        var deferred: [Deferred] = []
        for device in lane.catalog.devices {
            guard let name = StreamName(rawValue: device.id) else { continue }
            let current = controller.streamStatus(name)
            let previous = session.withLock { session -> AgentStatus.Stream? in
                defer { session.settings[name] = current }
                return session.settings[name]
            }
            if previous?.enabled != current.enabled || previous?.requestedRateHz != current.requestedRateHz
                || previous?.rateHz != current.rateHz
            {
                lane.recordSettings(
                    name,
                    enabled: current.enabled,
                    rateHz: current.requestedRateHz,
                    effectiveRateHz: current.rateHz,
                    wallTimeMs: nowMs()
                )
            }
            if previous?.available != current.available {
                deferred += handle(.device(id: device.id, available: current.available))
            }
        }
        startTimers(deferred)
    }

    /// A `.tick` for the node at each deadline among `deferred` (a coalesced rebirth).
    private func startTimers(_ deferred: [Deferred]) {
        for case .wait(let deadline) in deferred {
            Task(executorPreference: taskExecutor) { [feed, clock] in
                try? await clock.sleep(untilMonotonic: deadline.seconds)
                feed.yield(.tick)
            }
        }
    }

    // MARK: Commands

    /// A host's write the node accepted, as a command through the control door; nil when applied, else why not.
    private func apply(_ write: SparkplugWrite) -> String? {
        guard let stream = write.deviceID else {
            return "the node has no writable metric \"\(write.metricName)\""
        }
        let number = commandCounter.add(1, ordering: .relaxed).newValue
        let id = "sparkplug-\(nowMs())-\(number)"
        var command: [String: Any] = ["id": id, "stream": stream]
        switch (write.metricName, write.value) {
        case (MotionSparkplug.Config.enabled.definition.name, .boolean(let on)):
            command["command"] = on ? "start" : "stop"
        case (MotionSparkplug.Config.rateHz.definition.name, let value):
            let rate: Double
            switch value {
            case .double(let r): rate = r
            case .float(let r): rate = Double(r)
            case .int64(let r): rate = Double(r)
            case .uint64(let r): rate = Double(r)
            default: return "\(write.metricName) takes a number of hertz"
            }
            guard rate.isFinite else { return "\(write.metricName) must be a finite number of hertz" }
            command["command"] = "set-rate"
            command["rate_hz"] = rate
        default:
            return "\"\(write.metricName)\" cannot be written"
        }
        guard let payload = try? JSONSerialization.data(withJSONObject: command, options: [.sortedKeys]) else {
            return "the command could not be encoded"
        }
        guard let reply = control.handleUnsigned(Array(payload), source: "sparkplug") else {
            return "the control door ignored the command"
        }
        guard reply.ok else { return "\(reply.message) (\(reply.code))" }
        status.publishIfConnected()
        syncStreams()
        return nil
    }
}
