import Synchronization

/// Topic strings by small integer id, so the outbox stores an id per message instead of a String (which
/// would retain or copy per sample). Append-only: ids stay valid for the life of the agent.
public final class TopicTable: Sendable {
    private let topics = Mutex<[String]>([])

    public init() {}

    /// The id of `topic`, registering it on first use. Called at configuration time, not per sample.
    public func id(for topic: String) -> Int {
        topics.withLock { list in
            if let i = list.firstIndex(of: topic) { return i }
            list.append(topic)
            return list.count - 1
        }
    }

    public func topic(_ id: Int) -> String? {
        topics.withLock { list in id >= 0 && id < list.count ? list[id] : nil }
    }
}
