import AgentPipeline
import Foundation
import Logging
import MotionWire

/// Which inbound control messages become commands, refusing cheaply before it works: retain flag, size, then —
/// with signing on — the signature and its target, and only then the rate limit (so unverified junk never draws
/// on the operators' budget), the signer's counter, the command's JSON, redelivery and age. A plain value with no
/// clock, lock or broker of its own — the caller passes the time — so every rule is testable alone;
/// `ControlPlane` keeps one behind its lock.
///
/// Refusals of what could not be verified are answered at most `refusalsPerSecond` times a second; beyond that
/// they are ignored (logged and counted), so junk does not turn into a flood of replies.
package struct ControlAdmission: Sendable {
    package typealias Settings = ControlDoorSettings

    package enum Verdict: Sendable, Equatable {
        case admitted(ControlRequest)
        /// Answered with the failure; nothing changes.
        case refused(ControlFailure)
        /// Neither applied nor answered (retained, redelivered, an unanswered refusal); the reason is for the log.
        case ignored(String)
    }

    package let settings: Settings
    private var bucket: TokenBucket
    private var refusals: TokenBucket
    private var recentIDs: [String] = []
    private var recentSet: Set<String> = []
    private var counters: CounterLedger?
    /// Refusals not answered for lack of refusal budget, since start.
    package private(set) var unansweredRefusals: UInt64 = 0
    /// A refused document's report (the status) was held back for lack of budget and is still to be sent.
    private var reportOwed = false

    /// - Parameter now: the device clock, Unix seconds; the rate limits start full.
    package init(settings: Settings, now: Double, logger: Logger = Logger(label: "motion-agent.control")) {
        self.settings = settings
        bucket = TokenBucket(rate: settings.ratePerSecond, capacity: settings.burst, now: now)
        refusals = TokenBucket(rate: settings.refusalsPerSecond, capacity: settings.refusalBurst, now: now)
        if settings.keys != nil {
            counters = CounterLedger(
                state: settings.counterStore,
                windowSeconds: settings.signatureWindowSeconds,
                logger: logger
            )
        }
    }

    /// Judges one message that arrived on `topic` at `now` (Unix seconds). `clockSynchronized` false skips the age
    /// check: an unsynchronized clock cannot tell an old command from a new one.
    package mutating func admit(
        _ payload: [UInt8],
        topic: String,
        retained: Bool,
        now: Double,
        clockSynchronized: Bool
    ) -> Verdict {
        if retained {
            return .ignored(
                "a retained control message — publish commands without the retain flag, and clear it (mosquitto_pub -r -n -t TOPIC)"
            )
        }
        guard payload.count <= settings.maxPayloadBytes else {
            return unverified(
                ControlFailure(
                    .tooLarge,
                    "the command is \(payload.count) bytes; at most \(settings.maxPayloadBytes) are accepted"
                ),
                now: now
            )
        }
        guard let keys = settings.keys else {
            return admitUnsigned(payload, now: now, clockSynchronized: clockSynchronized)
        }
        // A replay costs no signature check: a counter this device has judged already is refused on the envelope's
        // claim alone. Only refusals can come of an unverified claim — a forged one is refused either way — and a
        // flood of captured commands then costs a parse each, not an Ed25519 verification.
        if let claim = SignedEnvelope.claimedCounter(payload, topic: topic, limits: .command),
            let refusal = refuseUsedCounter(
                claim.counter,
                key: claim.keyID,
                id: claim.id,
                now: now,
                clockSynchronized: clockSynchronized
            )
        {
            return refusal
        }
        let opened: SignedEnvelope.Opened
        switch SignedEnvelope.open(
            payload,
            topic: topic,
            keys: keys,
            maximumSize: settings.maxPayloadBytes,
            limits: .command,
            what: "the command"
        ) {
        case .failure(let failure): return unverified(failure, now: now)
        case .success(let o): opened = o
        }
        let id = opened.members.first { $0.key == "id" }?.value.string.flatMap(SignedEnvelope.echoable)
        // The counter before the rate limit: a captured envelope replayed (or one without a counter) verifies,
        // but it is refused for the counter alone, so replays draw on the refusals' budget, never the operators'.
        guard let counter = opened.members.first(where: { $0.key == "counter" })?.value.integer, counter >= 1,
            counter <= CounterLedger.maximum
        else {
            return unverified(
                ControlFailure(
                    .unauthorized,
                    id: id,
                    "a signed command needs \"counter\": a whole number above every earlier one of its key (motion-agent ctl keeps it beside the key)"
                ),
                now: now
            )
        }
        if let refusal = refuseUsedCounter(
            counter,
            key: opened.keyID,
            id: id,
            now: now,
            clockSynchronized: clockSynchronized
        ) {
            return refusal
        }
        guard bucket.take(now: now) else { return .refused(rateLimited) }
        // Judged: the counter is used, whatever the verdict on the command inside (a refused one sent again is a
        // replay, refused within the refusals' budget above).
        do {
            try counters?.record(counter, key: opened.keyID, now: now, clockSynchronized: clockSynchronized)
        } catch {
            return .refused(
                ControlFailure(
                    .internalFailure,
                    id: id,
                    "the command's counter could not be kept (\(error)), and without it a replay would pass after a restart: it is not applied — make agent.state_dir writable and give it room"
                )
            )
        }
        let request: ControlRequest
        switch ControlRequest.parse(members: opened.members) {
        case .failure(let f): return .refused(f)
        case .success(let r): request = r
        }
        if let refusal = checkRepeatAndAge(request, now: now, clockSynchronized: clockSynchronized) { return refusal }
        return .admitted(request)
    }

    /// The refusal of a counter `key` has used already (or one at or below what it remembers), nil for a fresh one.
    private mutating func refuseUsedCounter(
        _ counter: Int,
        key keyID: String,
        id: String?,
        now: Double,
        clockSynchronized: Bool
    ) -> Verdict? {
        switch counters?.check(counter, key: keyID, now: now, clockSynchronized: clockSynchronized) ?? .fresh {
        case .fresh: return nil
        case .seen:
            let redelivery = id.map { recentSet.contains($0) } ?? false
            return unverified(
                ControlFailure(
                    .unauthorized,
                    id: id,
                    "the counter \(counter) of key \(keyID) was used already: a replayed command is refused — sign every command anew"
                ),
                now: now,
                quietly: redelivery
                    ? "signed control command \(id ?? "-") arrived again with the same counter (a QoS 1 redelivery)"
                    : nil
            )
        case .belowFloor(let floor):
            return unverified(
                ControlFailure(
                    .unauthorized,
                    id: id,
                    "the counter \(counter) of key \(keyID) is at or below \(floor), older than what this device remembers: it could be a replay — sign the command anew (the counter rises with every signature)"
                ),
                now: now
            )
        }
    }

    private mutating func admitUnsigned(_ payload: [UInt8], now: Double, clockSynchronized: Bool) -> Verdict {
        guard bucket.take(now: now) else { return .refused(rateLimited) }
        let request: ControlRequest
        switch ControlRequest.parse(payload, maximumSize: settings.maxPayloadBytes) {
        case .failure(let f): return .refused(f)
        case .success(let r): request = r
        }
        if let refusal = checkRepeatAndAge(request, now: now, clockSynchronized: clockSynchronized) { return refusal }
        return .admitted(request)
    }

    private mutating func checkRepeatAndAge(_ request: ControlRequest, now: Double, clockSynchronized: Bool) -> Verdict?
    {
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
        return nil
    }

    private var rateLimited: ControlFailure {
        ControlFailure(
            .rateLimited,
            "too many commands: at most \(settings.ratePerSecond) per second (burst \(Int(settings.burst))) — slow down and retry"
        )
    }

    /// A refusal of something that could not be verified, or of a replay: answered while the refusal budget lasts
    /// (or, with `quietly`, ignored with that reason: a redelivery is not answered twice). Beyond it the refusals
    /// are counted and reported in one log line every `unansweredReportSeconds` (an empty reason is not logged),
    /// so a flood of junk fills neither the broker with replies nor the journal with lines.
    private mutating func unverified(_ failure: ControlFailure, now: Double, quietly: String? = nil) -> Verdict {
        if refusals.take(now: now) { return quietly.map { .ignored($0) } ?? .refused(failure) }
        unansweredRefusals += 1
        guard now - lastUnansweredReport >= Self.unansweredReportSeconds || now < lastUnansweredReport else {
            return .ignored("")
        }
        let count = unansweredRefusals - reportedUnanswered
        lastUnansweredReport = now
        reportedUnanswered = unansweredRefusals
        return .ignored(
            "\(count) control message(s) refused without an answer since the last report (more than \(settings.refusalsPerSecond) a second could not be verified; \(unansweredRefusals) since start) — the latest: \(failure.message)"
        )
    }

    static let unansweredReportSeconds = 10.0
    private var lastUnansweredReport = -Double.infinity
    private var reportedUnanswered: UInt64 = 0

    /// Takes a token of the refusals' budget for a refusal reported outside `admit` (a refused or stale desired
    /// document, reported by republishing the status): false, and counted as unanswered, once it is spent — the
    /// report is then owed (`settleOwedReport`), so the last refusal of a flood still reaches the status.
    package mutating func reportRefusal(now: Double) -> Bool {
        if refusals.take(now: now) {
            reportOwed = false
            return true
        }
        unansweredRefusals += 1
        reportOwed = true
        return false
    }

    /// What became of a report `reportRefusal` had to hold back: due now (once, when the budget has a token
    /// again), still held, or none owed.
    package mutating func settleOwedReport(now: Double) -> OwedReport {
        guard reportOwed else { return .none }
        guard refusals.take(now: now) else { return .held }
        reportOwed = false
        return .due
    }

    /// See `settleOwedReport`.
    package enum OwedReport: Sendable {
        case none, due, held
    }

    /// Whole seconds for a message. A timestamp is any finite number the sender wrote, so the age can lie far
    /// beyond Int's range, where `Int(_:)` traps (libFuzzer found `"timestamp": 1.7e25`).
    static func seconds(_ value: Double) -> String { String(format: "%.0f", value) }

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
