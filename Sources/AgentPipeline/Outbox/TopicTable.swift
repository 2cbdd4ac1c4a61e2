import Synchronization

/// Topic strings by small integer id, so the outbox stores an id per message instead of a String (which
/// would retain or copy per sample). Append-only: ids stay valid for the life of the agent.
package final class TopicTable: Sendable {
    private let topics = Mutex<[String]>([])

    package init() {}

    /// The id of `topic`, registering it on first use. Called at configuration time, not per sample.
    package func id(for topic: String) -> Int {
        topics.withLock { list in
            if let i = list.firstIndex(of: topic) { return i }
            list.append(topic)
            return list.count - 1
        }
    }

    package func topic(_ id: Int) -> String? {
        topics.withLock { list in id >= 0 && id < list.count ? list[id] : nil }
    }

    /// The current `streams.<name>.expiry_s` of each topic's stream, seconds (absent: none). The durable log
    /// stores no expiry in its records, so its replay looks the stream's current one up here — after a
    /// restart too, when the configuration set it before the first record is replayed.
    private let expiries = Mutex<[String: UInt32]>([:])

    /// Sets (nil or 0: clears) the expiry of `topic`'s messages. Called at configuration time.
    package func setExpiry(_ seconds: Int?, forTopic topic: String) {
        let value = UInt32(clamping: seconds ?? 0)
        expiries.withLock { table in
            if value == 0 { table[topic] = nil } else { table[topic] = value }
        }
    }

    /// The expiry of `topic`'s messages, seconds; 0 when they never expire.
    package func expirySeconds(ofTopic topic: String) -> UInt32 {
        expiries.withLock { $0[topic] ?? 0 }
    }
}
