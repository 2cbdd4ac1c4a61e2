import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Integrations
import Logging
import MotionWire
import ServiceLifecycle

/// Performs what `ConnectionSupervisor` decides: reads the broker's events, hands inbound messages to the
/// control inbox at once (never waiting on a command), and sleeps out back-offs on a timer while events keep
/// flowing. Second in the group, so it stops after the outbox has drained: then the goodbye, and DISCONNECT.
final class ConnectionSupervisorService: Service {
    private typealias Supervisor = ConnectionSupervisor<AgentMonotonicClock>

    private let mqtt: MQTTSettings
    private let deviceID: String
    /// The connect options of this start (the will carries the boot count); the supervisor picks the server.
    private let connectOptions: @Sendable (_ bootCount: UInt64) throws -> BrokerConnectOptions
    private let broker: BrokerClient
    private let inbox: ControlInbox
    private let control: ControlPlane
    /// Commands, groups, the desired layers and the probe: subscribed after every CONNACK.
    private let subscriptions: [String]
    /// The QoS of those subscriptions (`AgentBuilder.subscriptionQoS`).
    private let subscriptionQoS: Int
    private let status: StatusPublisher
    private let publisher: OutboxPublisher
    private let operations: AgentOperations
    private let health: HealthReporter
    private let startup: AgentStartup
    /// Seconds the goodbye's disconnect may spend flushing.
    private let drainTimeout: Double
    /// Seeds the back-off's jitter and the first server (`AgentBuilder.Options.randomSeed`).
    private let backoffSeed: UInt64
    private let clock: any AgentClock
    /// Where its unstructured tasks run (`AgentBuilder.Options.taskExecutor`).
    private let taskExecutor: (any TaskExecutor)?
    private let logger: Logger

    init(
        mqtt: MQTTSettings,
        deviceID: String,
        connectOptions: @escaping @Sendable (_ bootCount: UInt64) throws -> BrokerConnectOptions,
        broker: BrokerClient,
        inbox: ControlInbox,
        control: ControlPlane,
        subscriptions: [String],
        subscriptionQoS: Int,
        status: StatusPublisher,
        publisher: OutboxPublisher,
        operations: AgentOperations,
        health: HealthReporter,
        startup: AgentStartup,
        drainTimeout: Double,
        backoffSeed: UInt64,
        clock: any AgentClock,
        taskExecutor: (any TaskExecutor)?,
        logger: Logger
    ) {
        self.taskExecutor = taskExecutor
        self.backoffSeed = backoffSeed
        self.clock = clock
        self.mqtt = mqtt
        self.deviceID = deviceID
        self.connectOptions = connectOptions
        self.broker = broker
        self.inbox = inbox
        self.control = control
        self.subscriptions = subscriptions
        self.subscriptionQoS = subscriptionQoS
        self.status = status
        self.publisher = publisher
        self.operations = operations
        self.health = health
        self.startup = startup
        self.drainTimeout = drainTimeout
        self.logger = logger
    }

    func run() async throws {
        guard let boot = await startup.bootCount() else { return }
        let baseOptions = try connectOptions(boot)
        let logger = self.logger
        let mqtt = self.mqtt
        let endpoints = mqtt.endpoints
        // Seeded per start (AgentBuilder): a fleet that restarts together spreads its first servers and its
        // retries.
        var backoff = Backoff(
            base: mqtt.reconnectMinDelay,
            cap: mqtt.reconnectMaxDelay,
            seed: backoffSeed,
            jitter: mqtt.reconnectJitter == .equal ? .equal : .full
        )
        let firstServer = min(Int(backoff.unit() * Double(endpoints.count)), endpoints.count - 1)
        let clock = self.clock.monotonic
        var supervisor = Supervisor(
            clock: clock,
            backoff: backoff,
            servers: endpoints.map(\.description),
            firstServer: firstServer,
            protocolVersion: mqtt.protocolVersion == .v311 ? .v311 : .v5,
            protocolFallback: mqtt.protocolVersion == .auto
        )
        if endpoints.count > 1 {
            logger.info(
                "\(endpoints.count) brokers in mqtt.servers: \(supervisor.servers.joined(separator: ", ")); starting at \(supervisor.servers[firstServer])"
            )
        }
        logger.info("connecting to mqtt://\(supervisor.servers[firstServer]) as \(baseOptions.clientID)")
        /// The options of the next attempt: the supervisor's server and protocol.
        func nextOptions() -> BrokerConnectOptions {
            // The will made afresh for each connection, so its time is this connection's: an operator reading
            // the statuses a cluster's nodes retain apart (RabbitMQ) orders a will and a birth by time, and a will
            // of a later connection must come after every birth of an earlier one.
            var options = (try? connectOptions(boot)) ?? baseOptions
            // The supervisor's servers are config.yaml's endpoints, in their order (a Server Reference only
            // chooses among them).
            let endpoint = endpoints[supervisor.server]
            options.host = endpoint.host
            options.port = endpoint.port
            options.protocolVersion = supervisor.protocolVersion
            return options
        }
        func publishLink() {
            operations.connections.use(
                BrokerLink(
                    server: supervisor.servers[supervisor.server],
                    protocol: supervisor.protocolVersion.rawValue,
                    failovers: supervisor.failovers
                )
            )
        }
        publishLink()
        let (inputs, feed) = AsyncStream<Supervisor.Event>.makeStream()
        let defaultPort = mqtt.port
        let forwarder = Task(executorPreference: taskExecutor) { [broker, inbox] in
            for await event in broker.events {
                if case .message(let message) = event {
                    inbox.offer(message)
                } else if let event = Supervisor.event(for: event, defaultPort: defaultPort) {
                    feed.yield(event)
                }
            }
        }
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }

        /// Performs `actions`; returns true once the connection has been closed for good.
        func perform(_ actions: [Supervisor.Action]) async -> Bool {
            var closed = false
            for action in actions {
                switch action {
                case .connect:
                    publishLink()
                    let options = nextOptions()
                    do {
                        try broker.connect(options)
                    } catch {
                        logger.error("cannot connect to \(options.host):\(options.port): \(error)")
                    }
                case .writeHealth(let state, let lastError, let failures, let retryIn):
                    health.write(
                        state,
                        broker: supervisor.servers[supervisor.server],
                        lastError: lastError,
                        failures: failures,
                        retryIn: retryIn
                    )
                case .log(let level, let message):
                    logger.log(level: level, "\(message)")
                case .publishBirth:
                    status.publish(.online, birth: true)
                case .subscribeControl:
                    do {
                        try broker.subscribe(subscriptions, qos: subscriptionQoS)
                    } catch {
                        logger.error(
                            "cannot subscribe to the control topics \(subscriptions): \(error) — commands will not reach this device"
                        )
                    }
                case .setPublisherConnected(let up):
                    publisher.setConnected(up)
                case .reportConnected:
                    operations.connected()
                case .reportConnectFailed:
                    operations.connectFailed()
                case .wait(let deadline):
                    timer?.cancel()
                    timer = Task(executorPreference: taskExecutor) {
                        try? await clock.sleep(until: deadline, tolerance: nil)
                        feed.yield(.tick)
                    }
                case .publishGoodbye:
                    if broker.isConnected { status.publish(.offline, reason: "shutdown") }
                case .disconnect:
                    await broker.disconnect(flushTimeout: drainTimeout)
                    closed = true
                case .closeConnection:
                    await broker.disconnect(flushTimeout: 1)
                }
            }
            return closed
        }

        var closed = false
        await withGracefulShutdownHandler {
            feed.yield(.start)
            for await event in inputs {
                if await perform(supervisor.handle(event)) {
                    closed = true
                    break
                }
            }
        } onGracefulShutdown: {
            feed.yield(.shutdown)
        }
        // Cancelled rather than shut down gracefully: still leave the broker with a goodbye.
        if !closed { _ = await perform(supervisor.handle(.shutdown)) }
        feed.finish()
        // Ends the client's event stream (AsyncStream cancellation), as the agent is done with it.
        forwarder.cancel()
        await forwarder.value
        inbox.finish()
    }
}
