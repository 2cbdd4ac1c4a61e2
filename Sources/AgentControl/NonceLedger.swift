/// The nonces of signed commands seen within the timestamp window, so a captured command cannot be replayed.
///
/// Commands outside ±`windowSeconds` of the device clock are refused anyway, so a nonce need only be remembered
/// until its timestamp leaves the window. Memory is bounded by `capacity`: when it is full the entry with the
/// oldest timestamp is forgotten and its timestamp becomes a floor — every later command stamped at or before
/// the floor is refused as stale — so forgetting never reopens a replay.
struct NonceLedger: Sendable {
    enum Verdict: Equatable {
        case fresh
        case replayed
        /// Outside the window; the associated value is the age in seconds (negative for the future).
        case stale(age: Double)
        /// Inside the window but stamped at or before an entry forgotten for lack of room.
        case forgotten
    }

    let windowSeconds: Double
    let capacity: Int
    /// (timestamp, nonce), ascending by timestamp.
    private var entries: [(timestamp: Double, nonce: String)] = []
    private var seen: Set<String> = []
    private var floor = -Double.infinity

    init(windowSeconds: Double, capacity: Int) {
        precondition(windowSeconds > 0 && capacity > 0, "a nonce ledger needs a positive window and capacity")
        self.windowSeconds = windowSeconds
        self.capacity = capacity
    }

    var count: Int { entries.count }

    /// Judges a command stamped `timestamp` with `nonce` at device time `now`, and remembers it when fresh.
    mutating func admit(nonce: String, timestamp: Double, now: Double) -> Verdict {
        forget(before: now - windowSeconds)
        let age = now - timestamp
        guard abs(age) <= windowSeconds else { return .stale(age: age) }
        guard timestamp > floor else { return .forgotten }
        guard !seen.contains(nonce) else { return .replayed }
        if entries.count >= capacity {
            let oldest = entries.removeFirst()
            seen.remove(oldest.nonce)
            floor = max(floor, oldest.timestamp)
            guard timestamp > floor else { return .forgotten }
        }
        var low = 0
        var high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].timestamp <= timestamp { low = mid + 1 } else { high = mid }
        }
        entries.insert((timestamp, nonce), at: low)
        seen.insert(nonce)
        return .fresh
    }

    private mutating func forget(before cutoff: Double) {
        var drop = 0
        while drop < entries.count, entries[drop].timestamp < cutoff { drop += 1 }
        guard drop > 0 else { return }
        for entry in entries[..<drop] { seen.remove(entry.nonce) }
        entries.removeFirst(drop)
    }
}
