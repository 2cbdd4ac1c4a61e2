import AgentControl
import AgentPorts
import Logging
import ServiceLifecycle
import UnixSignals

/// Everything that changes the running agent from outside, in its own tasks — off the connection's event
/// path and the acknowledgements' path, so a slow command (a SQLite history query, a YAML reload) or a flood
/// of them delays only other commands: commands from the control inbox (each reply published, and the status
/// when the command changed it), SIGHUP reloads, and the status republished after a device fault or recovery.
final class ControlService: Service {
    private let control: ControlPlane
    private let inbox: ControlInbox
    private let broker: BrokerClient
    private let status: StatusPublisher
    /// The desired-state topics, subscribed again after a flood made the client or the inbox drop messages.
    private let desiredTopics: [String]
    private let connections: ConnectionCounters
    /// One element per device fault or recovery.
    private let deviceFaults: AsyncStream<Void>
    private let startup: AgentStartup
    private let logger: Logger

    init(
        control: ControlPlane,
        inbox: ControlInbox,
        broker: BrokerClient,
        status: StatusPublisher,
        desiredTopics: [String],
        connections: ConnectionCounters,
        deviceFaults: AsyncStream<Void>,
        startup: AgentStartup,
        logger: Logger
    ) {
        self.control = control
        self.inbox = inbox
        self.broker = broker
        self.status = status
        self.desiredTopics = desiredTopics
        self.connections = connections
        self.deviceFaults = deviceFaults
        self.startup = startup
        self.logger = logger
    }

    func run() async throws {
        guard await startup.bootCount() != nil else { return }
        await cancelWhenGracefulShutdown { [self] in
            await withDiscardingTaskGroup { group in
                group.addTask { await self.handleCommands() }
                group.addTask { await self.reloadOnHangup() }
                group.addTask { await self.republishStatusAfterFaults() }
                group.addTask { await self.resubscribeDesiredAfterDrops() }
            }
        }
    }

    private func handleCommands() async {
        for await message in inbox.messages {
            if control.carriesDesiredState(message.topic) {
                // A desired document is not answered: the retained status says what became of it.
                if control.receiveDesired(message) { status.publishIfConnected() }
                continue
            }
            guard let outcome = control.handle(message) else { continue }
            do {
                try broker.publishResponse(
                    topic: outcome.replyTopic,
                    payload: outcome.payload,
                    correlationData: outcome.correlationData
                )
            } catch {
                logger.error("cannot send the reply to \(outcome.replyTopic): \(error)")
            }
            if outcome.stateChanged { status.publish(.online) }
            if Task.isCancelled { return }
        }
    }

    /// A flood on a topic the agent listens to makes the client or the inbox drop inbound messages — possibly
    /// the newest desired document, which would leave the device on an older version until it reconnects.
    /// Desired documents are retained, so once the drops stop (a second without new ones) the agent subscribes
    /// to the desired topics again and the broker hands over the newest document of each layer (one it already
    /// applied changes nothing).
    private func resubscribeDesiredAfterDrops() async {
        guard !desiredTopics.isEmpty else { return }
        var handled = connections.inboundDropped
        var previous = handled
        while (try? await Task.sleep(for: .seconds(1))) != nil {
            let dropped = connections.inboundDropped
            defer { previous = dropped }
            guard dropped != handled, dropped == previous, broker.isConnected else { continue }
            logger.notice(
                "\(dropped - handled) inbound messages were dropped (a flood): subscribing to the desired-state topics again so the newest retained documents arrive"
            )
            handled = dropped
            do {
                try broker.subscribe(desiredTopics, qos: 1)
            } catch {
                logger.error("cannot subscribe to \(desiredTopics) again: \(error) — the next reconnection will")
            }
        }
    }

    private func republishStatusAfterFaults() async {
        for await _ in deviceFaults { status.publishIfConnected() }
    }

    /// SIGHUP re-reads config.yaml through the control door, like the reload-config command (the door logs
    /// the outcome); an invalid file keeps the running configuration and says why.
    private func reloadOnHangup() async {
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            if case .applied = control.reload(trigger: .hangup) { status.publishIfConnected() }
        }
    }
}
