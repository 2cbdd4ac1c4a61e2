import AgentPorts
import Foundation
import Logging

/// Replay protection for signed commands that survives restarts and clock trouble: every signed command carries
/// its signer's counter, which only rises (the operators' tools use the microseconds since 1970 at signing, or one
/// more than the last they used when that is higher). Per key the ledger keeps a floor and the counters seen
/// above it; a command whose counter is at or below the floor, or seen already, is a replay. The last
/// `remembered` counters are kept so commands a broker delivers out of order still pass, and the ledger is
/// written to the state directory (`StateFile.commandCounters`) before the command is applied, so a replay is
/// refused after a restart too. The device's clock is not needed: a board that booted in 1970 still refuses
/// replays.
///
/// Without a kept ledger for a key (a first start, a state directory that was wiped) and with a synchronized
/// clock, the floor starts at the time window's start (`now − window`, in microseconds), so a command captured
/// earlier cannot be replayed against a fresh device.
struct CounterLedger {
    enum Verdict: Equatable {
        case fresh
        /// Seen already: a replay, or a QoS 1 redelivery.
        case seen
        /// At or below what this device still remembers for the key.
        case belowFloor(Int)
    }

    private struct Signer: Codable {
        var floor: Int
        var recent: [Int]
    }

    static let remembered = 256
    /// Counters are whole numbers a JSON double holds exactly.
    static let maximum = 9_007_199_254_740_992

    private var signers: [String: Signer] = [:]
    private let state: (any StateDirectory)?
    private let windowSeconds: Double

    /// Reads the kept ledger; a file that cannot be read is reported through `problem` and the ledger starts from
    /// the time window (as for a key never seen).
    init(state: (any StateDirectory)?, windowSeconds: Double, logger: Logger) {
        self.state = state
        self.windowSeconds = windowSeconds
        guard let state else { return }
        do {
            if let bytes = try state.read(.commandCounters) {
                signers = try JSONDecoder().decode([String: Signer].self, from: Data(bytes))
            }
        } catch {
            logger.error(
                "\(state.location(of: .commandCounters)) is unreadable (\(error)): signed commands are checked against the time window only until new ones are recorded — it will be rewritten"
            )
        }
    }

    /// Judges `counter` from the key `keyID` at device time `now`, without recording it.
    func check(_ counter: Int, key keyID: String, now: Double, clockSynchronized: Bool) -> Verdict {
        let floor = signers[keyID]?.floor ?? (clockSynchronized ? Int((now - windowSeconds) * 1e6) : 0)
        if counter <= floor { return .belowFloor(floor) }
        if signers[keyID]?.recent.contains(counter) == true { return .seen }
        return .fresh
    }

    /// Records `counter` (judged fresh) and writes the ledger; a failed write throws, and the command must not
    /// apply, since a replay would then pass after a restart.
    mutating func record(_ counter: Int, key keyID: String, now: Double, clockSynchronized: Bool) throws {
        var signer =
            signers[keyID] ?? Signer(floor: clockSynchronized ? Int((now - windowSeconds) * 1e6) : 0, recent: [])
        signer.recent.append(counter)
        signer.recent.sort()
        if signer.recent.count > Self.remembered {
            signer.floor = max(signer.floor, signer.recent.removeFirst())
        }
        let previous = signers[keyID]
        signers[keyID] = signer
        guard let state else { return }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try state.replace(.commandCounters, with: Array(encoder.encode(signers)))
        } catch {
            signers[keyID] = previous
            throw error
        }
    }
}
