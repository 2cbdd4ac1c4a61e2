import AgentConfig
import AgentPorts
import Foundation
import Logging
import MotionHistory
import Synchronization

/// The control door: every command from the device, group and fleet control topics comes through here, is
/// checked, applied through the `AgentController`, and answered exactly once.
///
/// Refused without a change of state: malformed or oversized payloads, invalid UTF-8, unknown commands or
/// streams, wrong types, absurd values (400/404), commands older than `maxAgeSeconds` when the clock is
/// synchronized (409), and anything beyond the rate limit (429). Retained commands are ignored (they would
/// re-apply at every reconnect); a redelivered command (same id, QoS 1) is applied once and not answered twice.
///
/// With an HMAC key (`Settings.hmacKey`) every command must come in a `CommandSignature` envelope: unsigned or
/// tampered envelopes, timestamps outside the signature window and reused nonces are refused (401) before the
/// command is even parsed. A byte-for-byte replay of an applied command cannot be told from a QoS 1
/// redelivery, so, like one, it is logged and neither applied nor answered again.
public final class ControlPlane: Sendable {
    public struct Settings: Sendable {
        /// Commands older than this (by their `timestamp`) are refused, seconds; 0 disables the check.
        public var maxAgeSeconds: Double = 300
        /// Sustained commands per second, and the burst allowed above it.
        public var ratePerSecond: Double = 10
        public var burst: Double = 20
        /// The largest command accepted, bytes (`control.max_payload_bytes`).
        public var maxPayloadBytes: Int = ControlRequest.maximumSize
        /// How many recent command ids are remembered for de-duplication.
        public var rememberedIDs: Int = 1024
        /// The shared key of signed commands (`control.hmac_key_file`, at least 16 bytes); nil accepts
        /// unsigned commands.
        public var hmacKey: [UInt8]? = nil
        /// How many nonces of signed commands are remembered at most (`NonceLedger`).
        public var rememberedNonces: Int = 8192
        /// Signed commands must be stamped within ± this of the device clock, seconds: `maxAgeSeconds`, or
        /// 300 s when the age check is off, since replay protection needs a bounded window.
        public var signatureWindowSeconds: Double { maxAgeSeconds > 0 ? maxAgeSeconds : 300 }
        public init() {}
    }

    /// What to send back, and whether the retained status must be republished.
    public struct Outcome: Sendable {
        public var replyTopic: String
        public var payload: [UInt8]
        public var correlationData: [UInt8]?
        public var stateChanged: Bool
    }

    private struct State {
        var tokens: Double
        var lastRefill: Double
        var recentIDs: [String] = []
        var recentSet: Set<String> = []
        var nonces: NonceLedger?
    }

    private let controller: AgentController
    private let topics: TopicScheme
    private let deviceID: String
    private let settings: Settings
    private let clock: @Sendable () -> Double
    private let clockSynchronized: @Sendable () -> Bool
    private let statusDocument: @Sendable () -> AgentStatus
    private let reloadConfiguration: @Sendable () throws -> [String: Any]
    private let history: HistoryRecorder?
    private let logger: Logger
    private let state: Mutex<State>
    private let signature: CommandSignature?

    public init(
        controller: AgentController,
        topics: TopicScheme,
        deviceID: String,
        settings: Settings = Settings(),
        clock: @escaping @Sendable () -> Double = { WallClock.realtimeNow() },
        clockSynchronized: @escaping @Sendable () -> Bool = { true },
        statusDocument: @escaping @Sendable () -> AgentStatus,
        reloadConfiguration: @escaping @Sendable () throws -> [String: Any] = {
            throw ControlFailure(code: 409, id: nil, "this agent was started without a configuration file to reload")
        },
        history: HistoryRecorder? = nil,
        logger: Logger
    ) {
        self.history = history
        self.reloadConfiguration = reloadConfiguration
        self.controller = controller
        self.topics = topics
        self.deviceID = deviceID
        self.settings = settings
        self.clock = clock
        self.clockSynchronized = clockSynchronized
        self.statusDocument = statusDocument
        self.logger = logger
        signature = settings.hmacKey.map(CommandSignature.init(key:))
        var initial = State(tokens: settings.burst, lastRefill: clock())
        if settings.hmacKey != nil {
            initial.nonces = NonceLedger(
                windowSeconds: settings.signatureWindowSeconds,
                capacity: settings.rememberedNonces
            )
        }
        state = Mutex(initial)
    }

    /// Handles one inbound message. Returns nil when nothing is to be answered (retained or duplicate).
    public func handle(_ message: InboundMessage) -> Outcome? {
        let replyTopic = message.responseTopic ?? topics.controlReply
        func answer(_ reply: [String: Any], changed: Bool = false) -> Outcome {
            var r = reply
            r["device"] = deviceID
            let data = (try? JSONSerialization.data(withJSONObject: r, options: [.sortedKeys])) ?? Data("{}".utf8)
            return Outcome(
                replyTopic: replyTopic,
                payload: Array(data),
                correlationData: message.correlationData,
                stateChanged: changed
            )
        }
        func fail(_ f: ControlFailure, command: String? = nil) -> Outcome {
            logger.warning(
                "control command refused (\(f.code)): \(f.message)",
                metadata: ["agent.command_id": "\(f.id ?? "-")", "mqtt.topic": "\(message.topic)"]
            )
            var reply: [String: Any] = ["ok": false, "code": f.code, "message": f.message]
            reply["id"] = f.id ?? NSNull()
            if let command { reply["command"] = command }
            return answer(reply)
        }

        if message.retain {
            logger.warning(
                "retained control message on \(message.topic) ignored — publish commands without the retain flag, and clear it: mosquitto_pub -r -n -t \(message.topic)"
            )
            return nil
        }
        guard takeToken() else {
            return fail(
                ControlFailure(
                    code: 429,
                    id: nil,
                    "too many commands: at most \(settings.ratePerSecond) per second (burst \(Int(settings.burst))) — slow down and retry"
                )
            )
        }
        var payload = message.payload
        if let signature {
            switch signature.open(message.payload, maximumSize: settings.maxPayloadBytes) {
            case .failure(let f): return fail(f)
            case .success(let opened):
                switch admit(opened) {
                case .fresh:
                    payload = opened.command
                case .stale(let age):
                    let window = Int(settings.signatureWindowSeconds)
                    let when = age >= 0 ? "\(Int(age)) s ago" : "\(Int(-age)) s ahead of the device clock"
                    return fail(
                        ControlFailure(
                            code: 401,
                            id: opened.id,
                            "the signed command is stamped \(when); signed commands must be stamped within ±\(window) s of the device clock — check both clocks (NTP) and send it again with a fresh timestamp and nonce"
                        )
                    )
                case .forgotten:
                    return fail(
                        ControlFailure(
                            code: 401,
                            id: opened.id,
                            "the signed command is stamped before the oldest command this device still remembers (\(settings.rememberedNonces) nonces are kept), so it could be a replay — send it again with a fresh timestamp and nonce"
                        )
                    )
                case .replayed:
                    if let id = opened.id, isRemembered(id) {
                        logger.warning(
                            "signed control command \(id) arrived again with the same nonce (a replay or a QoS 1 redelivery): ignored",
                            metadata: ["mqtt.topic": "\(message.topic)"]
                        )
                        return nil
                    }
                    return fail(
                        ControlFailure(
                            code: 401,
                            id: opened.id,
                            "the nonce \"\(opened.nonce)\" was already used: a replayed command is refused — sign every command with a new random nonce"
                        )
                    )
                }
            }
        }
        let request: ControlRequest
        switch ControlRequest.parse(payload, maximumSize: settings.maxPayloadBytes) {
        case .failure(let f): return fail(f)
        case .success(let r): request = r
        }
        if isDuplicate(request.id) {
            logger.info("control command \(request.id) was already applied: redelivery ignored")
            return nil
        }
        if let issued = request.issuedAt, settings.maxAgeSeconds > 0, clockSynchronized() {
            let age = clock() - issued
            if age > settings.maxAgeSeconds {
                return fail(
                    ControlFailure(
                        code: 409,
                        id: request.id,
                        "the command is \(Int(age)) s old; commands older than \(Int(settings.maxAgeSeconds)) s are refused — send it again with a current timestamp"
                    )
                )
            }
        }
        do {
            let (result, changed) = try execute(request.command)
            var reply: [String: Any] = ["id": request.id, "ok": true, "code": 200, "message": "ok"]
            if let result { reply["result"] = result }
            logger.info(
                "control command applied",
                metadata: ["agent.command_id": "\(request.id)", "agent.command": "\(request.command)"]
            )
            return answer(reply, changed: changed)
        } catch let f as ControlFailure {
            var f = f
            f.id = request.id
            return fail(f)
        } catch {
            return fail(
                ControlFailure(
                    code: 500,
                    id: request.id,
                    "the command failed inside the agent: \(error) — see the agent's log"
                )
            )
        }
    }

    private func execute(_ command: ControlCommand) throws -> (Any?, Bool) {
        func streamResult(_ s: AgentStatus.Stream) -> [String: Any] {
            var r: [String: Any] = [
                "enabled": s.enabled, "requestedRateHz": s.requestedRateHz, "rateHz": s.rateHz,
                "qos": s.qos, "retain": s.retain, "available": s.available,
            ]
            if let e = s.error { r["error"] = e }
            if let f = s.referenceFrame { r["referenceFrame"] = f }
            r["batch"] = s.batch
            r["encoding"] = s.encoding
            return r
        }
        switch command {
        case .start(let name):
            return (streamResult(try controller.update(name) { $0.enabled = true }), true)
        case .stop(let name):
            return (streamResult(try controller.update(name) { $0.enabled = false }), true)
        case .setRate(let name, let rate):
            return (streamResult(try controller.update(name) { $0.rateHz = rate }), true)
        case .setQoS(let name, let qos):
            return (streamResult(try controller.update(name) { $0.qos = qos }), true)
        case .setRetain(let name, let retain):
            return (streamResult(try controller.update(name) { $0.retain = retain }), true)
        case .setBatch(let name, let batch, let encoding):
            return (
                streamResult(
                    try controller.update(name) {
                        $0.batch = batch
                        if let encoding { $0.encoding = encoding }
                    }
                ), true
            )
        case .setReferenceFrame(let frame):
            return (streamResult(try controller.setReferenceFrame(frame)), true)
        case .resetPedometer:
            try controller.resetPedometer()
            history?.pedometerWasReset()
            return (["numberOfSteps": 0], false)
        case .queryPedometer(let from, let to):
            return (try withHistory { try $0.queryPedometer(from: from, to: to) }, false)
        case .queryActivity(let from, let to):
            return (try withHistory { try $0.queryActivity(from: from, to: to) }, false)
        case .reloadConfig:
            return (try reloadConfiguration(), true)
        case .status:
            let data = try JSONEncoder().encode(statusDocument())
            return (try JSONSerialization.jsonObject(with: data), false)
        case .listStreams:
            let status = statusDocument()
            return ((status.streams ?? [:]).mapValues { streamResult($0) }, false)
        case .ping:
            return (["time": clock()], false)
        }
    }

    private func withHistory<R>(_ body: (HistoryRecorder) throws -> R) throws -> R {
        guard let history else {
            throw ControlFailure(
                code: 409,
                id: nil,
                "step and activity history is unavailable on this device — the agent's log says why"
            )
        }
        do {
            return try body(history)
        } catch let e as HistoryError {
            switch e.code {
            case .invalidInterval: throw ControlFailure(code: 400, id: nil, e.description)
            case .outsideRetention: throw ControlFailure(code: 409, id: nil, e.description)
            default: throw ControlFailure(code: 500, id: nil, e.description)
            }
        }
    }

    private func takeToken() -> Bool {
        let now = clock()
        return state.withLock { s in
            s.tokens = min(settings.burst, s.tokens + max(0, now - s.lastRefill) * settings.ratePerSecond)
            s.lastRefill = now
            guard s.tokens >= 1 else { return false }
            s.tokens -= 1
            return true
        }
    }

    private func admit(_ opened: CommandSignature.Opened) -> NonceLedger.Verdict {
        let now = clock()
        return state.withLock { s in
            s.nonces?.admit(nonce: opened.nonce, timestamp: opened.timestamp, now: now) ?? .fresh
        }
    }

    private func isRemembered(_ id: String) -> Bool {
        state.withLock { $0.recentSet.contains(id) }
    }

    private func isDuplicate(_ id: String) -> Bool {
        state.withLock { s in
            if s.recentSet.contains(id) { return true }
            s.recentIDs.append(id)
            s.recentSet.insert(id)
            if s.recentIDs.count > settings.rememberedIDs {
                s.recentSet.remove(s.recentIDs.removeFirst())
            }
            return false
        }
    }
}
