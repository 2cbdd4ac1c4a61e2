import AgentPorts
import Testing

@testable import MosquittoTransport

/// The client's event queue on its own: order, the bound on inbound messages, connection events past the
/// bound, the end. (Acknowledgements never enter it: they go to the acknowledgement handler.)
@Suite struct BrokerEventChannelTests {
    private func message(_ number: Int32) -> BrokerEvent {
        .message(InboundMessage(topic: "t/\(number)", payload: [], qos: 0, retain: false))
    }

    /// Yields a message for each number that finds room, as the network thread does.
    private func yieldMessages(_ channel: BrokerEventChannel, _ numbers: [Int32]) {
        for number in numbers where channel.reserveData() { channel.yieldReservedData(message(number)) }
    }

    private func drain(_ channel: BrokerEventChannel, _ count: Int) async -> [BrokerEvent] {
        var iterator = channel.stream.makeAsyncIterator()
        var out: [BrokerEvent] = []
        for _ in 0..<count {
            guard let event = await iterator.next() else { break }
            out.append(event)
        }
        return out
    }

    @Test func deliversEverythingInOrder() async {
        let channel = BrokerEventChannel(dataLimit: 100)
        channel.yieldControl(.connected(sessionPresent: false))
        yieldMessages(channel, [1, 2, 3])
        #expect(channel.reserveData())
        channel.yieldReservedData(message(4))
        channel.yieldControl(.disconnected(reason: "test", expected: true))
        let events = await drain(channel, 6)
        #expect(
            events == [
                .connected(sessionPresent: false), message(1), message(2), message(3), message(4),
                .disconnected(reason: "test", expected: true),
            ]
        )
        #expect(channel.droppedDataEvents == 0)
    }

    @Test func dropsDataPastTheLimitButNeverConnectionEvents() async {
        let channel = BrokerEventChannel(dataLimit: 3)
        yieldMessages(channel, [1, 2])
        channel.yieldControl(.connected(sessionPresent: true))
        yieldMessages(channel, [3, 4, 5])  // 3 fits, 4 and 5 do not
        #expect(!channel.reserveData())
        channel.yieldControl(.disconnected(reason: "lost", expected: false))
        #expect(channel.droppedDataEvents == 3)
        let events = await drain(channel, 5)
        #expect(
            events == [
                message(1), message(2), .connected(sessionPresent: true), message(3),
                .disconnected(reason: "lost", expected: false),
            ]
        )
        // Taken events make room again.
        yieldMessages(channel, [6])
        #expect(await drain(channel, 1) == [message(6)])
        #expect(channel.droppedDataEvents == 3)
    }

    @Test func aWaitingConsumerGetsEventsYieldedLater() async {
        // Room for all 40, so nothing is dropped whether the consumer is waiting (hand-off) or behind (queue).
        let channel = BrokerEventChannel(dataLimit: 64)
        let consumer = Task { await drain(channel, 40) }
        for round in 0..<10 {
            let base = Int32(round * 4)
            yieldMessages(channel, [base, base + 1, base + 2, base + 3])
            await Task.yield()
        }
        let events = await consumer.value
        #expect(events == (0..<40).map { message(Int32($0)) })
        #expect(channel.droppedDataEvents == 0)
    }

    @Test func growsPastItsInitialSizeAndKeepsOrder() async {
        let channel = BrokerEventChannel(dataLimit: 1000)
        yieldMessages(channel, (0..<300).map { Int32($0) })
        channel.yieldControl(.connected(sessionPresent: false))
        let events = await drain(channel, 301)
        #expect(events.count == 301)
        #expect(events.first == message(0))
        #expect(events[299] == message(299))
        #expect(events.last == .connected(sessionPresent: false))
    }

    @Test func finishDeliversWhatIsQueuedThenEnds() async {
        let channel = BrokerEventChannel(dataLimit: 10)
        yieldMessages(channel, [7])
        channel.finish()
        channel.yieldControl(.connected(sessionPresent: false))  // ignored after the end
        var iterator = channel.stream.makeAsyncIterator()
        #expect(await iterator.next() == message(7))
        #expect(await iterator.next() == nil)
    }

    @Test func finishWakesAWaitingConsumer() async {
        let channel = BrokerEventChannel(dataLimit: 10)
        let consumer = Task { () -> BrokerEvent? in
            var iterator = channel.stream.makeAsyncIterator()
            return await iterator.next()
        }
        await Task.yield()
        channel.finish()
        #expect(await consumer.value == nil)
    }

    @Test func cancellingTheConsumerEndsTheStream() async {
        let channel = BrokerEventChannel(dataLimit: 10)
        let consumer = Task { () -> BrokerEvent? in
            var iterator = channel.stream.makeAsyncIterator()
            return await iterator.next()
        }
        consumer.cancel()
        #expect(await consumer.value == nil)
    }
}
