/// When the agent subscribes to the desired-state topics again, so the broker hands over each layer's newest
/// retained document after inbound messages may have been lost. Read once per tick by the control service.
///
/// The agent's own drops (the client's or the inbox's bounds, during a flood) are counted: once they stop for a
/// tick, it subscribes again. The broker drops too, and says nothing: in a clean session the agent subscribes
/// at QoS 0, and mosquitto drops QoS 0 messages for a client beyond `max_queued_messages` (1000 by default)
/// while the client is behind reading. A document published at a flood's tail can go that way with no drop of
/// the agent's own after it (a CI run's group flood: the last document never arrived, and nothing was logged
/// after the backlog), or in a burst the inbox takes whole. The broker holds messages back only while it has a
/// backlog for the agent, and a backlog ends in arrivals; so after a flood, or any stretch of `burstMessages`
/// arrivals or more, once nothing has arrived for `quietTicks` and the inbox is empty, it subscribes once more.
struct DesiredRefetch: Sendable {
    enum Reason: Equatable, Sendable {
        /// The agent dropped this many messages since the last time.
        case dropped(UInt64)
        /// A stretch of this many arrivals ended this many ticks ago.
        case quietAfter(messages: UInt64, ticks: Int)
    }

    /// Ticks without an arrival that end a stretch.
    static let quietTicks = 2
    /// Arrivals in one stretch past which the broker may have dropped some: a tenth of mosquitto's default
    /// `max_queued_messages`, so a broker configured lower is covered too; commands one at a time never reach it.
    static let burstMessages: UInt64 = 100

    private var handled: UInt64
    private var previousDropped: UInt64
    private var previousArrived: UInt64
    /// The current stretch of arrivals: how many, and the quiet ticks since the last one.
    private var stretch: (messages: UInt64, quiet: Int)?

    /// From the counters as they are at start.
    init(dropped: UInt64, arrived: UInt64) {
        handled = dropped
        previousDropped = dropped
        previousArrived = arrived
    }

    /// Whether the next tick may be a long one: nothing dropped is waiting to be handled and no stretch is open.
    /// An idle agent wakes less (each timer turn wakes two of the runtime's threads).
    var idle: Bool { previousDropped == handled && stretch == nil }

    /// One tick: the counters now (drops, and messages offered to the inbox), whether the inbox is empty and
    /// whether the client is connected. Returns why to subscribe again now, or nil.
    mutating func tick(dropped: UInt64, arrived: UInt64, inboxEmpty: Bool, connected: Bool) -> Reason? {
        defer {
            previousDropped = dropped
            previousArrived = arrived
        }
        if arrived != previousArrived {
            stretch = ((stretch?.messages ?? 0) + (arrived &- previousArrived), 0)
        } else if let current = stretch, inboxEmpty {
            stretch = (current.messages, current.quiet + 1)
        }
        if dropped != handled {
            guard dropped == previousDropped, connected else { return nil }
            defer { handled = dropped }
            // And once more when the flood's tail has passed.
            stretch = (max(stretch?.messages ?? 0, Self.burstMessages), 0)
            return .dropped(dropped &- handled)
        }
        guard let current = stretch, current.quiet >= Self.quietTicks else { return nil }
        guard connected else { return nil }
        stretch = nil
        return current.messages >= Self.burstMessages
            ? .quietAfter(messages: current.messages, ticks: current.quiet) : nil
    }
}
