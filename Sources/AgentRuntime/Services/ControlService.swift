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
    private let subscriptionQoS: Int
    private let connections: ConnectionCounters
    /// Says in the log, once per `dropReportSeconds`, what inbound messages were dropped and why.
    private let dropReport: InboundDropReport
    static let dropReportSeconds = 10
    /// One element per device fault or recovery.
    private let deviceFaults: AsyncStream<Void>
    /// An element when a desired document's report may have been held back by the refusals' budget: only then
    /// does `republishOwedStatus` poll the budget, so an idle agent has no timer for it.
    private let maybeOwed = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    private let startup: AgentStartup
    private let clock: any AgentClock
    /// Whether SIGHUP reloads config.yaml (`AgentBuilder.Options.reloadsOnHangup`).
    private let reloadsOnHangup: Bool
    private let logger: Logger

    init(
        control: ControlPlane,
        inbox: ControlInbox,
        broker: BrokerClient,
        status: StatusPublisher,
        desiredTopics: [String],
        subscriptionQoS: Int,
        connections: ConnectionCounters,
        dropReport: InboundDropReport,
        deviceFaults: AsyncStream<Void>,
        startup: AgentStartup,
        clock: any AgentClock,
        reloadsOnHangup: Bool,
        logger: Logger
    ) {
        self.clock = clock
        self.reloadsOnHangup = reloadsOnHangup
        self.control = control
        self.inbox = inbox
        self.broker = broker
        self.status = status
        self.desiredTopics = desiredTopics
        self.subscriptionQoS = subscriptionQoS
        self.connections = connections
        self.dropReport = dropReport
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
                group.addTask { await self.reportInboundDrops() }
                group.addTask { await self.republishOwedStatus() }
            }
        }
    }

    private func handleCommands() async {
        for await message in inbox.messages {
            if control.carriesDesiredState(message.topic) {
                // A desired document is not answered: the retained status says what became of it.
                if control.receiveDesired(message) {
                    status.publishIfConnected()
                } else {
                    maybeOwed.continuation.yield()
                }
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

    /// Refused desired documents beyond the refusals' budget do not republish the status each; the last one's
    /// report follows as soon as the budget allows, so the status never keeps an older refusal.
    private func republishOwedStatus() async {
        guard !desiredTopics.isEmpty else { return }
        for await _ in maybeOwed.stream {
            settling: while true {
                switch control.settleOwedStatus() {
                case .none: break settling
                case .due:
                    status.publishIfConnected()
                    break settling
                case .held:
                    guard (try? await clock.sleep(seconds: 0.25)) != nil else { return }
                }
            }
        }
    }

    /// A flood on a topic the agent listens to makes the client, the inbox or the broker drop inbound messages —
    /// possibly the newest desired document, which would leave the device on an older version until it
    /// reconnects. Desired documents are retained, so the agent subscribes to the desired topics again when
    /// `DesiredRefetch` says a document may have been lost, and the broker hands over the newest document of
    /// each layer (one it already applied changes nothing). Ticks are 5 s while idle, 1 s otherwise.
    private func resubscribeDesiredAfterDrops() async {
        guard !desiredTopics.isEmpty else { return }
        var refetch = DesiredRefetch(dropped: connections.inboundDropped, arrived: inbox.offered)
        while (try? await clock.sleep(seconds: refetch.idle ? 5 : 1)) != nil {
            let reason = refetch.tick(
                dropped: connections.inboundDropped,
                arrived: inbox.offered,
                inboxEmpty: inbox.waitingBytes == 0,
                connected: broker.isConnected
            )
            switch reason {
            case nil: continue
            case .dropped(let count):
                resubscribe(
                    "\(count) inbound messages were dropped (a flood): subscribing to the desired-state topics again so the newest retained documents arrive"
                )
            case .quietAfter(let messages, let ticks):
                resubscribe(
                    "\(messages) inbound messages in one stretch, none for \(ticks) s now: subscribing to the desired-state topics once more, for a document the broker may have dropped while the agent was behind"
                )
            }
        }
    }

    private func resubscribe(_ why: String) {
        logger.notice("\(why)")
        do {
            try broker.subscribe(desiredTopics, qos: subscriptionQoS)
        } catch {
            logger.error("cannot subscribe to \(desiredTopics) again: \(error) — the next reconnection will")
        }
    }

    /// One line per cause and interval while inbound messages are dropped, and one when they no longer are.
    private func reportInboundDrops() async {
        var report = dropReport
        let seconds = Self.dropReportSeconds
        while (try? await clock.sleep(seconds: Double(seconds))) != nil {
            for (level, line) in report.lines(after: connections.drops, seconds: seconds) {
                logger.log(level: level, "\(line)")
            }
        }
    }

    private func republishStatusAfterFaults() async {
        for await _ in deviceFaults { status.publishIfConnected() }
    }

    /// SIGHUP re-reads config.yaml through the control door, like the reload-config command (the door logs
    /// the outcome); an invalid file keeps the running configuration and says why.
    private func reloadOnHangup() async {
        guard reloadsOnHangup else { return }
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            if case .applied = control.reload(trigger: .hangup) { status.publishIfConnected() }
        }
    }
}
