import AgentPipeline
import MotionWire

/// Which inbound control messages become commands: retain flag, rate limit, signature and nonce, size, UTF-8,
/// JSON envelope, redelivery and age, in that order. A plain value with no clock, lock or broker of its own —
/// the caller passes the time — so every rule is testable alone; `ControlPlane` keeps one behind its lock.
///
/// A byte-for-byte replay of an applied signed command cannot be told from a QoS 1 redelivery, so, like one, it
/// is ignored rather than refused.
package struct ControlAdmission: Sendable {
    package typealias Settings = ControlDoorSettings

    package enum Verdict: Sendable, Equatable {
        case admitted(ControlRequest)
        /// Answered with the failure; nothing changes.
        case refused(ControlFailure)
        /// Neither applied nor answered (retained, redelivered); the reason is for the log.
        case ignored(String)
    }

    package let settings: Settings
    private let signature: CommandSignature?
    private var bucket: TokenBucket
    private var recentIDs: [String] = []
    private var recentSet: Set<String> = []
    private var nonces: NonceLedger?

    /// - Parameter now: the device clock, Unix seconds; the rate limit starts with a full burst.
    package init(settings: Settings, now: Double) {
        self.settings = settings
        signature = settings.hmacKey.map(CommandSignature.init(key:))
        bucket = TokenBucket(rate: settings.ratePerSecond, capacity: settings.burst, now: now)
        if settings.hmacKey != nil {
            nonces = NonceLedger(windowSeconds: settings.signatureWindowSeconds, capacity: settings.rememberedNonces)
        }
    }

    /// Judges one message received at `now` (Unix seconds). `clockSynchronized` false skips the age check: an
    /// unsynchronized clock cannot tell an old command from a new one.
    package mutating func admit(
        _ payload: [UInt8],
        retained: Bool,
        now: Double,
        clockSynchronized: Bool
    ) -> Verdict {
        if retained {
            return .ignored(
                "a retained control message — publish commands without the retain flag, and clear it (mosquitto_pub -r -n -t TOPIC)"
            )
        }
        guard takeToken(now: now) else {
            return .refused(
                ControlFailure(
                    .rateLimited,
                    "too many commands: at most \(settings.ratePerSecond) per second (burst \(Int(settings.burst))) — slow down and retry"
                )
            )
        }
        var command = payload
        if let signature {
            switch signature.open(payload, maximumSize: settings.maxPayloadBytes) {
            case .failure(let f): return .refused(f)
            case .success(let opened):
                switch nonces?.admit(nonce: opened.nonce, timestamp: opened.timestamp, now: now) ?? .fresh {
                case .fresh:
                    command = opened.command
                case .stale(let age):
                    let window = Int(settings.signatureWindowSeconds)
                    let when =
                        age >= 0 ? "\(Self.seconds(age)) s ago" : "\(Self.seconds(-age)) s ahead of the device clock"
                    return .refused(
                        ControlFailure(
                            .unauthorized,
                            id: opened.id,
                            "the signed command is stamped \(when); signed commands must be stamped within ±\(window) s of the device clock — check both clocks (NTP) and send it again with a fresh timestamp and nonce"
                        )
                    )
                case .forgotten:
                    return .refused(
                        ControlFailure(
                            .unauthorized,
                            id: opened.id,
                            "the signed command is stamped before the oldest command this device still remembers (\(settings.rememberedNonces) nonces are kept), so it could be a replay — send it again with a fresh timestamp and nonce"
                        )
                    )
                case .replayed:
                    if let id = opened.id, recentSet.contains(id) {
                        return .ignored(
                            "signed control command \(id) arrived again with the same nonce (a replay or a QoS 1 redelivery)"
                        )
                    }
                    return .refused(
                        ControlFailure(
                            .unauthorized,
                            id: opened.id,
                            "the nonce \"\(opened.nonce)\" was already used: a replayed command is refused — sign every command with a new random nonce"
                        )
                    )
                }
            }
        }
        let request: ControlRequest
        switch ControlRequest.parse(command, maximumSize: settings.maxPayloadBytes) {
        case .failure(let f): return .refused(f)
        case .success(let r): request = r
        }
        if !remember(request.id) {
            return .ignored("control command \(request.id) was already applied: a redelivery")
        }
        if let issued = request.issuedAt, settings.maxAgeSeconds > 0, clockSynchronized {
            let age = now - issued
            if age > settings.maxAgeSeconds {
                return .refused(
                    ControlFailure(
                        .expired,
                        id: request.id,
                        "the command is \(Self.seconds(age)) s old; commands older than \(Int(settings.maxAgeSeconds)) s are refused — send it again with a current timestamp"
                    )
                )
            }
        }
        return .admitted(request)
    }

    /// Whole seconds for a message. A timestamp is any finite number the sender wrote, so the age can lie far
    /// beyond Int's range, where `Int(_:)` traps (libFuzzer found `"timestamp": 1.7e25`).
    static func seconds(_ value: Double) -> String { String(format: "%.0f", value) }

    private mutating func takeToken(now: Double) -> Bool { bucket.take(now: now) }

    /// Remembers `id`; false when it was remembered already.
    private mutating func remember(_ id: String) -> Bool {
        guard recentSet.insert(id).inserted else { return false }
        recentIDs.append(id)
        if recentIDs.count > settings.rememberedIDs {
            recentSet.remove(recentIDs.removeFirst())
        }
        return true
    }
}
