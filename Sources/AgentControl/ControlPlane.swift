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
/// With an HMAC key (`Settings.hmacKey`) unsigned, tampered, stale and replayed envelopes are refused (401)
/// before the command is even parsed.
public final class ControlPlane: Sendable {
    public typealias Settings = ControlDoorSettings

    /// What to send back, and whether the retained status must be republished.
    public struct Outcome: Sendable {
        public var replyTopic: String
        public var reply: ControlReply
        public var correlationData: [UInt8]?
        public var stateChanged: Bool
        public var payload: [UInt8] { reply.encoded() }
    }

    private let controller: AgentController
    private let history: (any StepHistory)?
    /// The configuration's layers: every command's settings, reload and desired document goes through it.
    private let reconciler: ConfigurationReconciler
    /// Desired-state topic → its layer (`{root}/desired`, the fleet's, each group's).
    private let desiredTopics: [String: ConfigurationLayer]
    /// Opens signed desired documents when `Settings.hmacKey` is set.
    private let signature: CommandSignature?
    private let maxPayloadBytes: Int
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
    /// Inbound messages dropped so far (the client's bound and the control inbox's).
    private let inboundDropped: @Sendable () -> UInt64
    /// Which layers' retained documents arrived since the last subscription, until its probe returns.
    private let snapshot = Mutex<DesiredSnapshot?>(nil)

    private struct DesiredSnapshot {
        var barrier: SubscriptionBarrier
        var heard: Set<ConfigurationLayer> = []
        var droppedAtStart: UInt64
    }

    public init(
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
        inboundDropped: @escaping @Sendable () -> UInt64 = { 0 },
        logger: Logger
    ) {
        self.inboundDropped = inboundDropped
        self.reloadConfiguration = reloadConfiguration
        self.controller = controller
        self.history = history
        self.reconciler = reconciler
        self.desiredTopics = desiredTopics
        signature = settings.hmacKey.map(CommandSignature.init(key:))
        maxPayloadBytes = settings.maxPayloadBytes
        self.topics = topics
        self.deviceID = deviceID
        self.clock = clock
        self.clockSynchronized = clockSynchronized
        self.statusDocument = statusDocument
        self.logger = logger
        door = Mutex(ControlAdmission(settings: settings, now: clock()))
    }

    /// Handles one inbound message. Returns nil when nothing is to be answered (retained or duplicate).
    public func handle(_ message: InboundMessage) -> Outcome? {
        door.withLock { admission -> Outcome? in
            // Read inside the door, so admission sees the clock advance in the order it admits.
            let verdict = admission.admit(
                message.payload,
                retained: message.retain,
                now: clock(),
                clockSynchronized: clockSynchronized()
            )
            let request: ControlRequest
            switch verdict {
            case .ignored(let reason):
                logger.warning("control message ignored: \(reason)", metadata: ["mqtt.topic": "\(message.topic)"])
                return nil
            case .refused(let failure):
                return refuse(failure, message)
            case .admitted(let r):
                request = r
            }
            guard let descriptor = ControlCommandDescriptor.named(request.name) else {
                return refuse(
                    ControlFailure(
                        .internalFailure,
                        id: request.id,
                        "no handler for \(request.name): the command table and its parser disagree — report this bug"
                    ),
                    message
                )
            }
            do {
                let result = try descriptor.handle(request.command, context(commandID: request.id))
                logger.info(
                    "control command applied",
                    metadata: ["agent.command_id": "\(request.id)", "agent.command": "\(request.command)"]
                )
                return Outcome(
                    replyTopic: message.responseTopic ?? topics.controlReply,
                    reply: .applied(id: request.id, device: deviceID, result: result),
                    correlationData: message.correlationData,
                    stateChanged: descriptor.changesState
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

    /// The configuration's account for the status document (see `ConfigurationStatus`).
    package func configurationStatus(notes: [String: String]) -> ConfigurationStatus {
        reconciler.status(notes: notes)
    }

    /// Whether `topic` carries a layer's desired state or the probe after it (`receiveDesired`) rather than
    /// commands.
    public func carriesDesiredState(_ topic: String) -> Bool {
        desiredTopics[topic] != nil || topic == topics.desiredProbe
    }

    /// Called right before (re)subscribing to the desired topics: returns the barrier whose token to publish on
    /// `TopicScheme.desiredProbe` after the SUBSCRIBE (`SubscriptionBarrier`). When it comes back every layer the
    /// broker still retains has arrived — and a layer kept from an earlier connection that did not arrive was
    /// cleared meanwhile (an empty retained payload deletes the broker's copy, so a device away at that moment
    /// never sees it).
    public func beginDesiredSnapshot() -> SubscriptionBarrier {
        let barrier = SubscriptionBarrier(topic: topics.desiredProbe)
        snapshot.withLock { $0 = DesiredSnapshot(barrier: barrier, droppedAtStart: inboundDropped()) }
        return barrier
    }

    /// A layer's retained desired document (or the probe after them), through the door like every other
    /// change. Returns whether the status must be republished (applied, refused or removed: the status reports
    /// each).
    public func receiveDesired(_ message: InboundMessage) -> Bool {
        if message.topic == topics.desiredProbe { return completeDesiredSnapshot(message) }
        guard let layer = desiredTopics[message.topic] else { return false }
        snapshot.withLock { _ = $0?.heard.insert(layer) }
        return door.withLock { _ in receiveInsideTheDoor(message.payload, layer: layer, topic: message.topic) }
    }

    private func receiveInsideTheDoor(_ payload: [UInt8], layer: ConfigurationLayer, topic: String) -> Bool {
        let outcome = reconciler.receive(
            payload,
            for: layer,
            topic: topic,
            now: clock(),
            verify: signature.map { signature in
                { [maxPayloadBytes] payload in
                    signature.verify(payload, maximumSize: maxPayloadBytes, what: "the desired document")
                }
            }
        ) { [controller] effective in _ = try controller.apply(effective) }
        switch outcome {
        case .applied, .refused, .stale: return true
        case .unchanged: return false
        }
    }

    /// The probe came back: every layer kept from before that the broker no longer retains is removed.
    private func completeDesiredSnapshot(_ message: InboundMessage) -> Bool {
        let completed = snapshot.withLock { current -> DesiredSnapshot? in
            // A probe of an earlier connection proves nothing about this one's subscription.
            guard let s = current, s.barrier.isReturn(of: message) else { return nil }
            current = nil
            return s
        }
        guard let completed else { return false }
        guard inboundDropped() == completed.droppedAtStart else {
            logger.warning(
                "inbound messages were dropped while the retained desired documents arrived: layers that did not arrive are kept as they are (they may have been dropped rather than cleared); they are checked again at the next connection"
            )
            return false
        }
        var changed = false
        for (topic, layer) in desiredTopics.sorted(by: { $0.key < $1.key }) where !completed.heard.contains(layer) {
            guard let version = reconciler.documentVersions[layer] else { continue }
            logger.notice(
                "the broker retains no \(layer) desired document on \(topic) any more: v\(version) was cleared while this device was away, so the layer is removed (if the broker lost its retained messages instead, turn on its persistence and publish the document again)"
            )
            changed = door.withLock { _ in receiveInsideTheDoor([], layer: layer, topic: topic) } || changed
        }
        return changed
    }

    /// Re-reads config.yaml through the door, for SIGHUP and `reload-config` alike; an invalid file changes
    /// nothing and the outcome says why.
    public func reload(trigger: ReloadTrigger) -> ReloadOutcome {
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
            "control command refused (\(reply.code)): \(failure.message)",
            metadata: ["agent.command_id": "\(failure.id ?? "-")", "mqtt.topic": "\(message.topic)"]
        )
        return Outcome(
            replyTopic: message.responseTopic ?? topics.controlReply,
            reply: reply,
            correlationData: message.correlationData,
            stateChanged: false
        )
    }
}
