import AgentPorts

/// A FIFO of broker events in one ring buffer that doubles when full: taking and appending reuse the slots,
/// so a steady flow of events allocates nothing once the ring has grown to the largest backlog seen.
struct EventRing {
    /// A power of two, so positions wrap with a mask.
    private var slots = [BrokerEvent?](repeating: nil, count: 64)
    private var head = 0
    private(set) var count = 0

    mutating func append(_ event: BrokerEvent) {
        if count == slots.count { grow() }
        slots[(head + count) & (slots.count - 1)] = event
        count += 1
    }

    mutating func popFirst() -> BrokerEvent? {
        guard count > 0 else { return nil }
        let event = slots[head]
        slots[head] = nil
        head = (head + 1) & (slots.count - 1)
        count -= 1
        return event
    }

    private mutating func grow() {
        var larger = [BrokerEvent?](repeating: nil, count: slots.count * 2)
        for index in 0..<count { larger[index] = slots[(head + index) & (slots.count - 1)] }
        slots = larger
        head = 0
    }
}
