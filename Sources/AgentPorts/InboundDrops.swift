/// Inbound messages a broker client dropped before its consumer saw them, counted since the client was made.
/// Acknowledgements of published messages are never among them (they do not queue with inbound messages).
package struct InboundDrops: Sendable, Equatable {
    /// Dropped because the consumer was behind: the queue already held its limit of messages, or of bytes.
    package var behind: Int
    /// Of `behind`, those refused by the byte budget (the messages waiting held that many bytes).
    package var overBudget: Int
    /// Larger than the connection's maximum packet size, dropped before their payload was copied.
    package var oversize: Int
    /// The largest oversize message's payload, bytes (0 before the first).
    package var largestOversizeBytes: Int
    /// The topic of the latest message dropped for being behind, and for being too large, as received: text
    /// from the network, to be printed through MotionWire's `Printable`.
    package var lastBehindTopic: String?
    package var lastOversizeTopic: String?

    package init(
        behind: Int = 0,
        overBudget: Int = 0,
        oversize: Int = 0,
        largestOversizeBytes: Int = 0,
        lastBehindTopic: String? = nil,
        lastOversizeTopic: String? = nil
    ) {
        self.behind = behind
        self.overBudget = overBudget
        self.oversize = oversize
        self.largestOversizeBytes = largestOversizeBytes
        self.lastBehindTopic = lastBehindTopic
        self.lastOversizeTopic = lastOversizeTopic
    }
}
