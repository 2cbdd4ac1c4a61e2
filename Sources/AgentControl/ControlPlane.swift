import AgentConfig
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionWire
import Synchronization

/// The control door: every command from the device, group and fleet control topics, every reload of
/// config.yaml (SIGHUP included) and every desired-state document comes through here — one at a time — is checked (`ControlAdmission`), applied
/// through the `AgentController` by its `ControlCommandDescriptor`, and answered exactly once with a
/// `ControlReply`, whose wire code is chosen here and nowhere else.
///
/// Refused without a change of state: malformed or oversized payloads, invalid UTF-8, unknown commands or
/// streams, wrong types, absurd values (400/404), commands older than `maxAgeSeconds` when the clock is
/// synchronized (409), and anything beyond the rate limit (429). Retained commands are ignored (they would
/// re-apply at every reconnect); a redelivered command (same id, QoS 1) is applied once and not answered twice.
/// With the operators' keys (`Settings.keys`) every command and desired document must be signed by one of them
/// for its own topic: unsigned, tampered, moved and replayed envelopes are refused (401) before the command is
/// even parsed. Replies go only to the command's own reply namespace (`replyTopic(for:)`).
package final class ControlPlane: Sendable {
    package typealias Settings = ControlDoorSettings

    /// What to send back, and whether the retained status must be republished.
    package struct Outcome: Sendable {
        package var replyTopic: String
        package var reply: ControlReply
        package var correlationData: [UInt8]?
        package var stateChanged: Bool
        package var payload: [UInt8] { reply.encoded() }
    }

    private let controller: AgentController
    private let history: (any StepHistory)?
    /// The configuration's layers: every command's settings, reload and desired document goes through it.
    private let reconciler: ConfigurationReconciler
    /// Desired-state topic → its layer (`{root}/desired`, the fleet's, each group's).
    private let desiredTopics: [String: ConfigurationLayer]
    private let topics: TopicScheme
    private let deviceID: String
    private let clock: @Sendable () -> Double
    private let clockSynchronized: @Sendable () -> Bool
    private let statusDocument: @Sendable () -> AgentStatus
    private let reloadConfiguration: @Sendable () throws -> ReloadReport
    private let logger: Logger
    /// The door: admission's state, and held while a command or a reload is applied, so changes never
    /// interleave.
    private let door: Mutex<ControlAdmission>
    private let settings: Settings

    package init(
        controller: AgentController,
        history: (any StepHistory)? = nil,
        reconciler: ConfigurationReconciler,
        desiredTopics: [String: ConfigurationLayer] = [:],
        topics: TopicScheme,
        deviceID: String,
        settings: Settings = Settings(),
        clock: @escaping @Sendable () -> Double = { WallClock.realtimeNow() },
        clockSynchronized: @escaping @Sendable () -> Bool = { true },
        statusDocument: @escaping @Sendable () -> AgentStatus,
        reloadConfiguration: @escaping @Sendable () throws -> ReloadReport = {
            throw ControlFailure(.conflict, "this agent was started without a configuration file to reload")
        },
        logger: Logger
    ) {
        self.reloadConfiguration = reloadConfiguration
        self.controller = controller
        self.history = history
        self.reconciler = reconciler
        self.desiredTopics = desiredTopics
        self.topics = topics
        self.deviceID = deviceID
        self.clock = clock
        self.clockSynchronized = clockSynchronized
        self.statusDocument = statusDocument
        self.logger = logger
        self.settings = settings
        door = Mutex(ControlAdmission(settings: settings, now: clock(), logger: logger))
    }

    /// Where the answer to `message` goes: its MQTT 5 response topic when that lies in the operators' reply
    /// namespace (`motion-ctl/<client>/reply`), with this device's id as one more level so the operator's tool
    /// reads whose answer it is from the topic; otherwise this device's own `{root}/control/reply`. A sender
    /// cannot point replies anywhere else — at the fleet's control topic (where every device would answer every
    /// answer) or at a desired-state topic.
    func replyTopic(for message: InboundMessage) -> String {
        guard let requested = message.responseTopic, Self.isOperatorReplyTopic(requested) else {
            return topics.controlReply
        }
        return requested + "/" + deviceID
    }

    /// `motion-ctl/<one level>/reply`: what `motion-agent ctl` asks for.
    static func isOperatorReplyTopic(_ topic: String) -> Bool {
        // `motion-ctl/<client>/reply`, read without splitting (every command with a response topic asks).
        let (prefix, suffix) = ("motion-ctl/", "/reply")
        let utf8 = topic.utf8
        guard utf8.count > prefix.utf8.count + suffix.utf8.count, topic.hasPrefix(prefix), topic.hasSuffix(suffix)
        else {
            return false
        }
        let client = utf8.dropFirst(prefix.utf8.count).dropLast(suffix.utf8.count)
        guard !client.contains(UInt8(ascii: "/")) else { return false }
        return TopicScheme.levelProblem(String(Substring(client))) == nil
    }

    /// Handles one inbound message. Returns nil when nothing is to be answered (retained or duplicate).
    package func handle(_ message: InboundMessage) -> Outcome? {
        if let requested = message.responseTopic, !Self.isOperatorReplyTopic(requested) {
            logger.warning(
                "a command asked for its answer on \(Printable.text(requested, limit: 200)), outside the operators' reply namespace: it is answered on \(topics.controlReply) instead (motion-ctl/<client>/reply is accepted)",
                metadata: ["mqtt.topic": "\(message.topic)"]
            )
        }
        return door.withLock { admission -> Outcome? in
            // Read inside the door, so admission sees the clock advance in the order it admits.
            let verdict = admission.admit(
                message.payload,
                topic: message.topic,
                retained: message.retain,
                now: clock(),
                clockSynchronized: clockSynchronized()
            )
            let request: ControlRequest
            switch verdict {
            case .ignored(let reason):
                guard !reason.isEmpty else { return nil }  // counted, and reported in a later line
                logger.warning(
                    "control message ignored: \(Printable.text(reason, limit: 400))",
                    metadata: ["mqtt.topic": "\(message.topic)"]
                )
                return nil
            case .refused(let failure):
                return refuse(failure, message)
            case .admitted(let r):
                request = r
            }
            do {
                let result = try request.command.run(in: context(commandID: request.id))
                logger.info(
                    "control command applied",
                    // The id and the arguments come from the network (signed only when control.trusted_keys_file
                    // is set): printed harmless, as every refusal is.
                    metadata: [
                        "agent.command_id": "\(Printable.text(request.id))",
                        "agent.command": "\(Printable.text("\(request.command)", limit: 400))",
                    ]
                )
                return Outcome(
                    replyTopic: replyTopic(for: message),
                    reply: .applied(id: request.id, device: deviceID, result: result),
                    correlationData: message.correlationData,
                    stateChanged: result.shape.changesState
                )
            } catch var failure as ControlFailure {
                failure.id = request.id
                return refuse(failure, message)
            } catch {
                return refuse(
                    ControlFailure(
                        .internalFailure,
                        id: request.id,
                        "the command failed inside the agent: \(error) — see the agent's log"
                    ),
                    message
                )
            }
        }
    }

    /// A command that reached the agent by another protocol than its control topics — a Sparkplug host's
    /// NCMD/DCMD write (`source` "sparkplug") — through the same door: the same size check, rate limit,
    /// parsing, redelivery check, command table and configuration layer, with `source` in the log and in the
    /// command's id (its provenance in the status). There is no reply topic: the caller reports the outcome
    /// its own way. While commands must be signed (`control.trusted_keys_file`) it is refused, since such a
    /// command carries no operator's signature.
    package func handleUnsigned(_ payload: [UInt8], source: String) -> ControlReply? {
        let topic = "(\(source))"
        if settings.keys != nil {
            return refuse(
                ControlFailure(
                    .unauthorized,
                    "commands must be signed (control.trusted_keys_file) and a \(source) command carries no signature: it is refused — send it signed on the device's control topic with motion-agent ctl"
                ),
                InboundMessage(topic: topic, payload: payload, qos: 1, retain: false)
            ).reply
        }
        return handle(InboundMessage(topic: topic, payload: payload, qos: 1, retain: false))?.reply
    }

    /// The configuration's account for the status document (see `ConfigurationStatus`).
    package func configurationStatus(notes: [String: String]) -> ConfigurationStatus {
        reconciler.status(notes: notes)
    }

    /// Whether `topic` carries a layer's desired state (`receiveDesired`) rather than commands.
    package func carriesDesiredState(_ topic: String) -> Bool { desiredTopics[topic] != nil }

    /// A layer's retained desired document, through the door like every other change. Returns whether the
    /// status must be republished: always when it was applied; when it was refused or ignored as older (the
    /// status reports the last of each) only within the door's budget for refusals, so junk or replays on a
    /// desired topic — the fleet's reaches every device at once — do not become a status per message.
    package func receiveDesired(_ message: InboundMessage) -> Bool {
        guard let layer = desiredTopics[message.topic] else { return false }
        return door.withLock { admission in
            receiveInsideTheDoor(message.payload, layer: layer, topic: message.topic, admission: &admission)
        }
    }

    /// Whether the status must be republished now for a refused or stale desired document whose report the
    /// refusals' budget held back (`receiveDesired` returned false): `.due` once, when the budget allows;
    /// `.held` until then; `.none` when no report is owed.
    package func settleOwedStatus() -> ControlAdmission.OwedReport {
        door.withLock { $0.settleOwedReport(now: clock()) }
    }

    private func receiveInsideTheDoor(
        _ payload: [UInt8],
        layer: ConfigurationLayer,
        topic: String,
        admission: inout ControlAdmission
    ) -> Bool {
        let now = clock()
        let outcome = reconciler.receive(
            payload,
            for: layer,
            topic: topic,
            now: now
        ) { [controller] effective in _ = try controller.apply(effective) }
        switch outcome {
        case .applied: return true
        case .refused, .stale: return admission.reportRefusal(now: now)
        case .unchanged: return false
        }
    }

    /// Re-reads config.yaml through the door, for SIGHUP and `reload-config` alike; an invalid file changes
    /// nothing and the outcome says why.
    package func reload(trigger: ReloadTrigger) -> ReloadOutcome {
        door.withLock { _ in reloadInsideTheDoor(trigger: trigger) }
    }

    private func reloadInsideTheDoor(trigger: ReloadTrigger) -> ReloadOutcome {
        let outcome: ReloadOutcome
        do {
            outcome = .applied(try reloadConfiguration())
        } catch let failure as ControlFailure {
            outcome = .refused(failure)
        } catch {
            outcome = .refused(ControlFailure(.internalFailure, "the reload failed: \(error) — see the agent's log"))
        }
        switch outcome {
        case .applied: logger.notice("\(trigger.rawValue): \(outcome.summary)")
        case .refused: logger.error("\(trigger.rawValue): \(outcome.summary)")
        }
        return outcome
    }

    private func context(commandID: String) -> ControlContext {
        ControlContext(
            controller: controller,
            history: history,
            status: statusDocument,
            clock: clock,
            reload: { [self] in reloadInsideTheDoor(trigger: .command) },
            configure: { [self] settings in
                try reconciler.command(settings, id: commandID, time: clock()) { effective in
                    _ = try controller.apply(effective)
                }
            }
        )
    }

    private func refuse(_ failure: ControlFailure, _ message: InboundMessage) -> Outcome {
        let reply = ControlReply.refused(failure, device: deviceID)
        logger.warning(
            "control command refused (\(reply.code)): \(Printable.text(failure.message, limit: 400))",
            metadata: [
                "agent.command_id": "\(failure.id.map { Printable.text($0) } ?? "-")", "mqtt.topic": "\(message.topic)",
            ]
        )
        return Outcome(
            replyTopic: replyTopic(for: message),
            reply: reply,
            correlationData: message.correlationData,
            stateChanged: false
        )
    }
}
