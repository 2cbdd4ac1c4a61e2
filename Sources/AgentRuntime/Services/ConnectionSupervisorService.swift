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
    private typealias Supervisor = ConnectionSupervisor<ContinuousClock>

    private let context: AgentContext

    init(context: AgentContext) {
        self.context = context
    }

    func run() async throws {
        guard let boot = await context.startup.bootCount() else { return }
        let baseOptions = try context.connectOptions(bootCount: boot)
        let logger = context.logger
        let configuration = context.configuration
        let endpoints = configuration.mqtt.endpoints
        // Seeded per device and per start (String hashing is seeded per process): a fleet that restarts
        // together spreads its first servers and its retries.
        var backoff = Backoff(
            base: configuration.mqtt.reconnectMinDelay,
            cap: configuration.mqtt.reconnectMaxDelay,
            seed: UInt64(truncatingIfNeeded: configuration.device.id.hashValue),
            jitter: configuration.mqtt.reconnectJitter == .equal ? .equal : .full
        )
        let firstServer = min(Int(backoff.unit() * Double(endpoints.count)), endpoints.count - 1)
        let clock = ContinuousClock()
        var supervisor = Supervisor(
            clock: clock,
            backoff: backoff,
            servers: endpoints.map(\.description),
            firstServer: firstServer,
            protocolVersion: configuration.mqtt.protocolVersion == .v311 ? .v311 : .v5,
            protocolFallback: configuration.mqtt.protocolVersion == .auto
        )
        if endpoints.count > 1 {
            logger.info(
                "\(endpoints.count) brokers in mqtt.servers: \(supervisor.servers.joined(separator: ", ")); starting at \(supervisor.servers[firstServer])"
            )
        }
        logger.info("connecting to mqtt://\(supervisor.servers[firstServer]) as \(baseOptions.clientID)")
        /// The options of the next attempt: the supervisor's server and protocol.
        func nextOptions() -> BrokerConnectOptions {
            var options = baseOptions
            let name = supervisor.servers[supervisor.server]
            // A server a broker referred the agent to is not in mqtt.servers: its name parses back.
            let endpoint =
                endpoints.first { $0.description == name }
                ?? MQTTEndpoint(parsing: name, defaultPort: configuration.mqtt.port)
                ?? endpoints[0]
            options.host = endpoint.host
            options.port = endpoint.port
            options.protocolVersion = supervisor.protocolVersion
            return options
        }
        func publishLink() {
            context.operations.connections.use(
                BrokerLink(
                    server: supervisor.servers[supervisor.server],
                    protocol: supervisor.protocolVersion.rawValue,
                    failovers: supervisor.failovers
                )
            )
        }
        publishLink()
        let (inputs, feed) = AsyncStream<Supervisor.Event>.makeStream()
        let defaultPort = configuration.mqtt.port
        let forwarder = Task { [broker = context.broker, inbox = context.inbox] in
            for await event in broker.events {
                switch event {
                case .message(let message): inbox.offer(message)
                case .connected(let sessionPresent): feed.yield(.connected(sessionPresent: sessionPresent))
                case .connectFailed(let code, let reason, let isAuthorization):
                    // 0x84 Unsupported Protocol Version (MQTT 5), which libmosquitto also reports for a 3.1.1
                    // broker's CONNACK 1 "unacceptable protocol version" to a version-5 CONNECT.
                    if code == 0x84 {
                        feed.yield(.protocolRefused(reason: reason))
                    } else {
                        feed.yield(.connectFailed(reason: reason, isAuthorization: isAuthorization))
                    }
                case .disconnected(let reason, let expected):
                    feed.yield(.disconnected(reason: reason, expected: expected))
                case .serverReference(let written):
                    feed.yield(
                        .serverReference(
                            server: Supervisor.referredServer(written, defaultPort: defaultPort),
                            written: written
                        )
                    )
                }
            }
        }
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        /// The current connection's desired-state probe, published after the birth.
        var probe: [UInt8] = []

        /// Performs `actions`; returns true once the connection has been closed for good.
        func perform(_ actions: [Supervisor.Action]) async -> Bool {
            var closed = false
            for action in actions {
                switch action {
                case .connect:
                    publishLink()
                    let options = nextOptions()
                    do {
                        try context.broker.connect(options)
                    } catch {
                        logger.error("cannot connect to \(options.host):\(options.port): \(error)")
                    }
                case .writeHealth(let state, let lastError, let failures, let retryIn):
                    context.writeHealth(
                        state,
                        broker: supervisor.servers[supervisor.server],
                        lastError: lastError,
                        failures: failures,
                        retryIn: retryIn
                    )
                case .log(let level, let message):
                    logger.log(level: level, "\(message)")
                case .publishBirth:
                    context.publishCurrentStatus(state: .online, reason: nil)
                case .subscribeControl:
                    // Begun before the SUBSCRIBE, so no retained document can arrive unaccounted.
                    probe = context.control.beginDesiredSnapshot()
                    do {
                        try context.broker.subscribe(context.controlTopics, qos: 1)
                    } catch {
                        logger.error(
                            "cannot subscribe to the control topics \(context.controlTopics): \(error) — commands will not reach this device"
                        )
                    }
                case .probeDesiredState:
                    context.publishDesiredProbe(probe)
                case .setPublisherConnected(let up):
                    context.publisher.setConnected(up)
                case .reportConnected:
                    context.operations.connected()
                case .reportConnectFailed:
                    context.operations.connectFailed()
                case .wait(let deadline):
                    timer?.cancel()
                    timer = Task {
                        try? await clock.sleep(until: deadline, tolerance: nil)
                        feed.yield(.tick)
                    }
                case .publishGoodbye:
                    if context.broker.isConnected {
                        context.publishCurrentStatus(state: .offline, reason: "shutdown")
                    }
                case .disconnect:
                    await context.broker.disconnect(flushTimeout: context.options.drainTimeout)
                    closed = true
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
        context.inbox.finish()
    }
}
