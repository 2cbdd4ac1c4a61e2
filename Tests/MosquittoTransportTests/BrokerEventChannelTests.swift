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

/// The byte budget beside the message bound: what waiting messages hold (`InboundMessage.byteCount`) is bounded
/// too, so a flood of large messages cannot pile up; oversize messages are counted apart, with their topic.
@Suite struct BrokerEventChannelByteBudgetTests {
    private func message(_ payloadBytes: Int, topic: String = "t") -> InboundMessage {
        InboundMessage(topic: topic, payload: [UInt8](repeating: 0x41, count: payloadBytes), qos: 0, retain: false)
    }

    /// Reserves and yields `message` as the network thread does; false when it was dropped.
    private func offer(_ channel: BrokerEventChannel, _ message: InboundMessage) -> Bool {
        let granted = message.topic.withCString { channel.reserveData(bytes: message.byteCount, topic: $0) }
        if granted { channel.yieldReservedData(.message(message), reserved: message.byteCount) }
        return granted
    }

    @Test func messagesPastTheByteBudgetAreDroppedAndCountedWithTheirTopic() async {
        // 10 KiB of budget: two messages of 4 KiB + topic fit, the third does not although the count bound has room.
        let channel = BrokerEventChannel(dataLimit: 100, byteLimit: 10 << 10)
        #expect(offer(channel, message(4096, topic: "a/control")))
        #expect(offer(channel, message(4096, topic: "a/control")))
        #expect(!offer(channel, message(4096, topic: "b/desired")))
        #expect(channel.waitingBytes == 2 * (4096 + 9))
        #expect(channel.droppedDataEvents == 1)
        #expect(channel.drops == InboundDrops(behind: 1, overBudget: 1, lastBehindTopic: "b/desired"))
        // A small message still fits in what is left.
        #expect(offer(channel, message(100)))
        // Taking a message gives its bytes back.
        var iterator = channel.stream.makeAsyncIterator()
        _ = await iterator.next()
        #expect(channel.waitingBytes == 4096 + 9 + 101)
        #expect(offer(channel, message(4096)))
    }

    @Test func aMessageLargerThanTheBudgetPassesOnlyWhenNothingWaits() async {
        let channel = BrokerEventChannel(dataLimit: 100, byteLimit: 1000)
        #expect(offer(channel, message(5000)))
        #expect(!offer(channel, message(1)))
        var iterator = channel.stream.makeAsyncIterator()
        #expect(await iterator.next() == .message(message(5000)))
        #expect(channel.waitingBytes == 0)
        #expect(offer(channel, message(1)))
    }

    @Test func theMessageBoundStillCountsAsBehindButNotOverBudget() {
        let channel = BrokerEventChannel(dataLimit: 2, byteLimit: 1 << 20)
        #expect(offer(channel, message(1)))
        #expect(offer(channel, message(1)))
        #expect(!offer(channel, message(1, topic: "x")))
        #expect(channel.drops == InboundDrops(behind: 1, overBudget: 0, lastBehindTopic: "x"))
    }

    @Test func oversizeMessagesAreCountedApartWithTheLargestAndTheLatestTopic() {
        let channel = BrokerEventChannel(dataLimit: 10, byteLimit: 1000)
        "dev/control".withCString { channel.countOversize(bytes: 16 << 20, topic: $0) }
        "dev/desired".withCString { channel.countOversize(bytes: 1 << 20, topic: $0) }
        #expect(
            channel.drops
                == InboundDrops(oversize: 2, largestOversizeBytes: 16 << 20, lastOversizeTopic: "dev/desired")
        )
        #expect(channel.droppedDataEvents == 0)
        #expect(channel.waitingBytes == 0)
    }

    @Test func aFinishedChannelGivesBackWhatWasReserved() {
        let channel = BrokerEventChannel(dataLimit: 10, byteLimit: 1000)
        channel.finish()
        #expect(offer(channel, message(500)))
        #expect(channel.waitingBytes == 0)
    }
}

/// The MQTT 5 CONNECT properties: the Maximum Packet Size is sent whenever one is set, beside the session expiry
/// of a persistent session; MQTT 3.1.1 gets none (libmosquitto refuses properties there).
@Suite struct ConnectPropertiesTests {
    private func options(
        _ version: MQTTProtocolVersion,
        clean: Bool = true,
        maximumPacketSize: Int? = nil
    ) -> BrokerConnectOptions {
        BrokerConnectOptions(
            host: "127.0.0.1",
            port: 1883,
            clientID: "c",
            protocolVersion: version,
            cleanSession: clean,
            maximumPacketSize: maximumPacketSize
        )
    }

    @Test func theMaximumPacketSizeIsSentOnMQTT5() throws {
        let properties = try #require(try MosquittoClient.connectProperties(options(.v5, maximumPacketSize: 72_000)))
        #expect(properties.maximumPacketSize == 72_000)
        #expect(properties.sessionExpiryInterval == nil)
        let persistent = try #require(
            try MosquittoClient.connectProperties(options(.v5, clean: false, maximumPacketSize: 72_000))
        )
        #expect(persistent.maximumPacketSize == 72_000)
        #expect(persistent.sessionExpiryInterval == UInt32.max)
    }

    @Test func mqtt311GetsNoProperties() throws {
        #expect(try MosquittoClient.connectProperties(options(.v311, clean: false, maximumPacketSize: 72_000)) == nil)
        #expect(try MosquittoClient.connectProperties(options(.v5)) == nil)
    }

    @Test(arguments: [0, 127, 268_435_461])
    func aMaximumPacketSizeOutsideMQTTsRangeIsRefused(_ size: Int) {
        #expect(throws: BrokerError.self) { try MosquittoClient.validate(options(.v5, maximumPacketSize: size)) }
    }
}
