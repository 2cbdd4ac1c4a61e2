import AgentControl
import AgentPipeline
import AgentPorts
import Integrations
import Logging
import MotionWire
import ServiceLifecycle
import UnixSignals

/// Everything that changes the running agent from outside, in its own tasks — off the connection's event
/// path and the acknowledgements' path, so a slow command (a SQLite history query, a YAML reload) or a flood
/// of them delays only other commands: commands from the control inbox (each reply published, and the status
/// when the command changed it), SIGHUP reloads, and the status republished after a device fault or recovery.
final class ControlService: Service {
    private let context: AgentContext

    init(context: AgentContext) {
        self.context = context
    }

    func run() async throws {
        guard await context.startup.bootCount() != nil else { return }
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
        let context = self.context
        for await message in context.inbox.messages {
            if context.control.carriesDesiredState(message.topic) {
                // A desired document is not answered: the retained status says what became of it.
                if context.control.receiveDesired(message), context.broker.isConnected {
                    context.publishCurrentStatus(state: .online, reason: nil)
                }
                continue
            }
            guard let outcome = context.control.handle(message) else { continue }
            do {
                try context.broker.publishResponse(
                    topic: outcome.replyTopic,
                    payload: outcome.payload,
                    correlationData: outcome.correlationData
                )
            } catch {
                context.logger.error("cannot send the reply to \(outcome.replyTopic): \(error)")
            }
            if outcome.stateChanged {
                context.publishCurrentStatus(state: .online, reason: nil)
            }
            if Task.isCancelled { return }
        }
    }

    /// A flood on a topic the agent listens to makes the client or the inbox drop inbound messages — possibly
    /// the newest desired document, which would leave the device on an older version until it reconnects.
    /// Desired documents are retained, so once the drops stop (a second without new ones) the agent subscribes
    /// to the desired topics again and the broker hands over the newest document of each layer (one it already
    /// applied changes nothing).
    private func resubscribeDesiredAfterDrops() async {
        let desired = context.controlTopics.filter { context.control.carriesDesiredState($0) }
        guard !desired.isEmpty else { return }
        var handled = context.operations.connections.inboundDropped
        var previous = handled
        while (try? await Task.sleep(for: .seconds(1))) != nil {
            let dropped = context.operations.connections.inboundDropped
            defer { previous = dropped }
            guard dropped != handled, dropped == previous, context.broker.isConnected else { continue }
            context.logger.notice(
                "\(dropped - handled) inbound messages were dropped (a flood): subscribing to the desired-state topics again so the newest retained documents arrive"
            )
            handled = dropped
            // A fresh snapshot, as at connection: a snapshot spoiled by drops removes nothing, and the dropped
            // messages may have been a layer's clearing, so a cleared layer is noticed here rather than at the
            // next reconnection.
            let probe = context.control.beginDesiredSnapshot()
            do {
                try context.broker.subscribe(desired, qos: 1)
            } catch {
                context.logger.error("cannot subscribe to \(desired) again: \(error) — the next reconnection will")
                continue
            }
            context.publishDesiredProbe(probe)
        }
    }

    private func republishStatusAfterFaults() async {
        for await _ in context.deviceFaults where context.broker.isConnected {
            context.publishCurrentStatus(state: .online, reason: nil)
        }
    }

    /// SIGHUP re-reads config.yaml through the control door, like the reload-config command (the door logs
    /// the outcome); an invalid file keeps the running configuration and says why.
    private func reloadOnHangup() async {
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            if case .applied = context.control.reload(trigger: .hangup), context.broker.isConnected {
                context.publishCurrentStatus(state: .online, reason: nil)
            }
        }
    }
}
