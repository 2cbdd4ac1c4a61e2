import AgentPipeline
import AgentPorts
import MotionWire
import Testing

@Suite struct OutboxTests {
    private func enqueue(_ outbox: Outbox, _ value: Int, size: Int = 100) {
        var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: value), count: size)
        bytes[0] = UInt8(truncatingIfNeeded: value >> 8)
        bytes.withUnsafeBytes { _ = outbox.enqueue(topicID: 0, qos: 0, retain: false, payload: $0) }
    }

    private func drain(_ outbox: Outbox) -> [Int] {
        var out: [Int] = []
        while outbox.withOldest(
            timeout: 0,
            { m in
                out.append(Int(m.payload[0]) << 8 | Int(m.payload[m.payload.count - 1]))
                return .published
            }
        ) {}
        return out
    }

    @Test func deliversInOrder() {
        let outbox = Outbox(capacityBytes: 10_000)
        for i in 0..<50 { enqueue(outbox, i) }
        #expect(drain(outbox) == Array(0..<50))
        #expect(outbox.snapshot.published == 50)
        #expect(outbox.snapshot.droppedOverflow == 0)
    }

    @Test func dropsExactlyTheOldestWhenFull() {
        // 10 000 bytes hold 100 messages of 100 bytes.
        let outbox = Outbox(capacityBytes: 10_000)
        for i in 0..<250 { enqueue(outbox, i) }
        let left = drain(outbox)
        let dropped = outbox.snapshot.droppedOverflow
        #expect(Int(dropped) + left.count == 250)
        #expect(left == Array(Int(dropped)..<250))
        #expect(left.count >= 99)
    }

    @Test func wrapsAroundWithMixedSizes() {
        let outbox = Outbox(capacityBytes: 4096)
        var expected: [Int] = []
        var received: [Int] = []
        for i in 0..<2000 {
            enqueue(outbox, i, size: 50 + (i * 37) % 400)
            expected.append(i)
            if i % 3 == 0 {
                received += drain(outbox)
            }
        }
        received += drain(outbox)
        let dropped = Int(outbox.snapshot.droppedOverflow)
        #expect(received.count + dropped == 2000)
        #expect(received == received.sorted())
        #expect(received.last == 1999)
    }

    @Test func keepLeavesTheMessageForLater() {
        let outbox = Outbox(capacityBytes: 4096)
        enqueue(outbox, 7)
        #expect(outbox.withOldest(timeout: 0) { _ in .keep } == false)
        #expect(outbox.snapshot.depth == 1)
        #expect(drain(outbox) == [7])
    }

    @Test func refusesMessagesLargerThanTheArena() {
        let outbox = Outbox(capacityBytes: 2048)
        let big = [UInt8](repeating: 1, count: 4096)
        let ok = big.withUnsafeBytes { outbox.enqueue(topicID: 0, qos: 0, retain: false, payload: $0) }
        #expect(!ok)
        #expect(outbox.snapshot.rejected == 1)
    }
}
