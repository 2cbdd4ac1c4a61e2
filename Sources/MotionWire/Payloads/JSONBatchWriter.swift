/// Collects standalone JSON messages into a batch `{"batch":[message, …]}` in storage reserved once, so adding
/// a message allocates nothing.
public struct JSONBatchWriter: ~Copyable {
    public private(set) var count = 0
    private var items = JSONBuffer(capacity: 0)

    public init() {}

    /// Reserves room for `messages` messages of about `bytesPerMessage` and forgets any batch in progress.
    public mutating func reserve(messages: Int, bytesPerMessage: Int) {
        count = 0
        items = JSONBuffer(capacity: messages > 0 ? messages * bytesPerMessage + 64 : 0)
    }

    /// Adds one message, already encoded as its standalone JSON object.
    public mutating func add(_ message: borrowing JSONBuffer) {
        items.byte(count == 0 ? UInt8(ascii: "[") : UInt8(ascii: ","))
        message.withBytes { items.append($0) }
        count += 1
    }

    /// Writes the batch into `b` (replacing its contents) and starts the next one.
    public mutating func finish(into b: inout JSONBuffer) {
        b.reset()
        b.raw("{\"batch\":")
        if count == 0 { b.byte(UInt8(ascii: "[")) }
        items.withBytes { b.append($0) }
        b.raw("]}")
        items.reset()
        count = 0
    }
}
