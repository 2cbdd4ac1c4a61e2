import AgentPorts
import Logging
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
        let options = try context.connectOptions(bootCount: boot)
        let logger = context.logger
        logger.info("connecting to mqtt://\(options.host):\(options.port) as \(options.clientID)")

        let clock = ContinuousClock()
        let configuration = context.configuration
        var supervisor = Supervisor(
            clock: clock,
            backoff: Backoff(
                base: configuration.mqtt.reconnectMinDelay,
                cap: configuration.mqtt.reconnectMaxDelay,
                seed: UInt64(truncatingIfNeeded: configuration.device.id.hashValue)
            )
        )
        let (inputs, feed) = AsyncStream<Supervisor.Event>.makeStream()
        let forwarder = Task { [broker = context.broker, inbox = context.inbox] in
            for await event in broker.events {
                switch event {
                case .message(let message): inbox.offer(message)
                case .connected(let sessionPresent): feed.yield(.connected(sessionPresent: sessionPresent))
                case .connectFailed(_, let reason, let isAuthorization):
                    feed.yield(.connectFailed(reason: reason, isAuthorization: isAuthorization))
                case .disconnected(let reason, let expected):
                    feed.yield(.disconnected(reason: reason, expected: expected))
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
                    try? context.broker.connect(options)
                case .writeHealth(let state, let lastError, let failures, let retryIn):
                    context.writeHealth(state, lastError: lastError, failures: failures, retryIn: retryIn)
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
                    do {
                        _ = try probe.withUnsafeBytes {
                            try context.broker.publish(
                                topic: context.topics.desiredProbe,
                                payload: $0,
                                qos: 1,
                                retain: false
                            )
                        }
                    } catch {
                        logger.warning(
                            "cannot publish the desired-state probe on \(context.topics.desiredProbe): \(error) — a desired layer cleared while this device was away stays in force until the next connection"
                        )
                    }
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
