import AgentCore
import Foundation
import Logging
import Synchronization
import Testing

/// A broker that records what it is given and acknowledges only when told to.
private final class RecordingBroker: BrokerClient {
    struct Sent: Sendable {
        var id: Int32
        var topic: String
        var payload: [UInt8]
        var qos: Int
    }

    let events: AsyncStream<BrokerEvent>
    private let state = Mutex<(connected: Bool, nextID: Int32, sent: [Sent])>((true, 1, []))

    init() {
        events = AsyncStream { $0.finish() }
    }

    var isConnected: Bool { state.withLock { $0.connected } }
    var sent: [Sent] { state.withLock { $0.sent } }
    func connect(_ options: BrokerConnectOptions) throws(BrokerError) {}
    func disconnect(flushTimeout: Double) async {}
    func publishResponse(topic: String, payload: [UInt8], correlationData: [UInt8]?) throws(BrokerError) {}
    func subscribe(_ filters: [String], qos: Int) throws(BrokerError) {}

    func publish(topic: String, payload: UnsafeRawBufferPointer, qos: Int, retain: Bool) throws(BrokerError) -> Int32 {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.sent.append(Sent(id: id, topic: topic, payload: Array(payload), qos: qos))
            return id
        }
    }
}

@Suite struct DurablePublishingTests {
    /// Polls `condition` for up to 10 s (a bound for a loaded machine, not a speed assertion).
    private func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<2000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    @Test func durableMessagesGoToTheLogWhileDisconnectedAndAcksAdvanceTheCursor() async throws {
        let directory = NSTemporaryDirectory() + "durable-publishing-\(UUID().uuidString)"
        let log = try DurableLog(directory: directory, maxBytes: 1 << 20, maxAgeSeconds: 3600, logger: Logger(label: "t"))
        let staging = Outbox(capacityBytes: 1 << 16)
        let outbox = Outbox(capacityBytes: 1 << 16, durableStaging: staging)
        let topics = TopicTable()
        let topicID = topics.id(for: "motion/d/accelerometer")
        let broker = RecordingBroker()
        let publisher = OutboxPublisher(
            outbox: outbox, topics: topics, broker: broker, window: 1000,
            durable: .init(staging: staging, log: log, replayRate: 100_000), logger: Logger(label: "t"))
        publisher.start()

        // Disconnected: the messages leave the memory rings for the log at once.
        for i in 1...50 {
            let payload = Array("m\(i)".utf8)
            payload.withUnsafeBytes { _ = outbox.enqueue(topicID: topicID, qos: 1, retain: false, payload: $0, durable: true) }
        }
        #expect(await eventually { log.snapshot.appended == 50 })
        #expect(outbox.isEmpty && staging.isEmpty)
        #expect(broker.sent.isEmpty)

        publisher.setConnected(true)
        #expect(await eventually { broker.sent.count == 50 })
        let sent = broker.sent
        #expect(sent.map { String(decoding: $0.payload, as: UTF8.self) } == (1...50).map { "m\($0)" })
        #expect(sent.allSatisfy { $0.qos == 1 && $0.topic == "motion/d/accelerometer" })

        // Acknowledgements out of order: the cursor moves over the contiguous prefix only.
        for message in sent.reversed() where message.id != 1 { publisher.acknowledged(messageID: message.id) }
        #expect(log.snapshot.cursor == 0)
        #expect(log.snapshot.depth == 1)
        publisher.acknowledged(messageID: 1)
        #expect(log.snapshot.cursor == 50)
        #expect(publisher.durableCounters?.depth == 0)
        await publisher.stop(drainTimeout: 0)

        // The cursor was saved: a new log finds nothing left to send.
        let reopened = try DurableLog(directory: directory, maxBytes: 1 << 20, maxAgeSeconds: 3600, logger: Logger(label: "t"))
        #expect(reopened.snapshot.depth == 0)
        #expect(reopened.next(nowMillis: 0) == nil)
    }

    @Test func anInvalidTopicIsRefusedWithoutBlockingTheOthers() async throws {
        let directory = NSTemporaryDirectory() + "durable-publishing-\(UUID().uuidString)"
        let log = try DurableLog(directory: directory, maxBytes: 1 << 20, maxAgeSeconds: 3600, logger: Logger(label: "t"))
        let staging = Outbox(capacityBytes: 1 << 16)
        let outbox = Outbox(capacityBytes: 1 << 16, durableStaging: staging)
        let topics = TopicTable()
        let bad = topics.id(for: "motion/+/accelerometer")
        let good = topics.id(for: "motion/d/accelerometer")
        let broker = RecordingBroker()
        let publisher = OutboxPublisher(
            outbox: outbox, topics: topics, broker: broker, window: 1000,
            durable: .init(staging: staging, log: log, replayRate: 100_000), logger: Logger(label: "t"))
        publisher.start()
        publisher.setConnected(true)
        for i in 0..<10 {
            [UInt8(i)].withUnsafeBytes {
                _ = outbox.enqueue(topicID: i % 2 == 0 ? bad : good, qos: 1, retain: false, payload: $0, durable: true)
            }
        }
        #expect(await eventually { broker.sent.count == 5 })
        #expect(publisher.durableCounters?.rejected == 5)
        #expect(broker.sent.map { $0.payload[0] } == [1, 3, 5, 7, 9])
        await publisher.stop(drainTimeout: 0)
    }
}
