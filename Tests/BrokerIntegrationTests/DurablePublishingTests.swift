import AgentPipeline
import AgentPorts
import AgentRuntime
import Foundation
import Integrations
import Logging
import MosquittoTransport
import MotionWire
import Platform
import Synchronization
import TestSupport
import Testing

/// The durable path of the publisher against a real mosquitto: the log fills while disconnected, drains in
/// order when connected, and the broker's acknowledgements move the cursor.
@Suite(.timeLimit(.minutes(5))) struct DurablePublishingTests {
    /// A fresh log, memory and staging rings, and a publisher on a real (not yet connected) client.
    struct Rig {
        let log: DurableLog
        let staging = Outbox(capacityBytes: 1 << 16)
        let outbox: Outbox
        let topics = TopicTable()
        let client = MosquittoClient()
        let publisher: OutboxPublisher

        init() throws {
            log = try DurableLog(
                storage: SegmentFiles(folder: NSTemporaryDirectory() + "durable-publishing-\(UUID().uuidString)"),
                maxBytes: 1 << 20,
                maxAgeSeconds: 3600,
                logger: Logger(label: "t")
            )
            outbox = Outbox(capacityBytes: 1 << 16, durableStaging: staging)
            publisher = OutboxPublisher(
                outbox: outbox,
                topics: topics,
                broker: client,
                window: 1000,
                durable: .init(staging: staging, log: log, replayRate: 100_000),
                logger: Logger(label: "t")
            )
        }
    }

    /// Polls `condition` for up to 10 s (a bound for a loaded machine, not a speed assertion).
    private func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<2000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    /// Connects `client`; the broker's acknowledgements reach `publisher` straight from the client (its
    /// `start` installs it as the handler).
    private func connect(
        _ broker: MosquittoBroker,
        _ publisher: OutboxPublisher,
        client: MosquittoClient
    ) async throws -> (MosquittoClient, Task<Void, Never>) {
        try client.connect(broker.connectOptions(clientID: "durable-\(UUID().uuidString.prefix(8))"))
        let connected = Mutex(false)
        let pump = Task {
            for await event in client.events {
                switch event {
                case .connected: connected.withLock { $0 = true }
                default: break
                }
            }
        }
        #expect(await eventually { connected.withLock { $0 } }, "connected to the test broker")
        return (client, pump)
    }

    @Test func durableMessagesGoToTheLogWhileDisconnectedAndAcksAdvanceTheCursor() async throws {
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/d/accelerometer"])
        let rig = try Rig()
        let (log, outbox, staging, topics, client, publisher) = (
            rig.log, rig.outbox, rig.staging, rig.topics, rig.client, rig.publisher
        )
        let topicID = topics.id(for: "motion/d/accelerometer")
        publisher.start()

        // Disconnected: the messages leave the memory rings for the log at once.
        for i in 1...50 {
            let payload = Array("m\(i)".utf8)
            payload.withUnsafeBytes {
                _ = outbox.enqueue(topicID: topicID, qos: 1, retain: false, payload: $0, durable: true)
            }
        }
        #expect(await eventually { log.snapshot.appended == 50 })
        #expect(outbox.isEmpty && staging.isEmpty)

        let (_, pump) = try await connect(broker, publisher, client: client)
        publisher.setConnected(true)
        try await subscriber.waitFor(count: 50, timeout: 10)
        #expect(subscriber.messages.map { String(decoding: $0.payload, as: UTF8.self) } == (1...50).map { "m\($0)" })
        #expect(await eventually { log.snapshot.cursor == 50 }, "the broker's PUBACKs moved the cursor over all 50")
        #expect(publisher.durableCounters?.depth == 0)
        await publisher.stop(drainTimeout: 0)
        await client.disconnect(flushTimeout: 1)
        pump.cancel()
        await subscriber.close()

        // The cursor was saved: a new log finds nothing left to send.
        let reopened = try DurableLog(
            storage: SegmentFiles(folder: log.directory),
            maxBytes: 1 << 20,
            maxAgeSeconds: 3600,
            logger: Logger(label: "t")
        )
        #expect(reopened.snapshot.depth == 0)
        #expect(reopened.next(nowMillis: 0) == nil)
    }

    @Test func anInvalidTopicIsRefusedWithoutBlockingTheOthers() async throws {
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/d/accelerometer"])
        let rig = try Rig()
        let (outbox, topics, client, publisher) = (rig.outbox, rig.topics, rig.client, rig.publisher)
        let bad = topics.id(for: "motion/+/accelerometer")
        let good = topics.id(for: "motion/d/accelerometer")
        let (_, pump) = try await connect(broker, publisher, client: client)
        publisher.start()
        publisher.setConnected(true)
        for i in 0..<10 {
            [UInt8(i)].withUnsafeBytes {
                _ = outbox.enqueue(topicID: i % 2 == 0 ? bad : good, qos: 1, retain: false, payload: $0, durable: true)
            }
        }
        try await subscriber.waitFor(count: 5, timeout: 10)
        #expect(publisher.durableCounters?.rejected == 5)
        #expect(subscriber.messages.map { $0.payload[0] } == [1, 3, 5, 7, 9])
        await publisher.stop(drainTimeout: 0)
        await client.disconnect(flushTimeout: 1)
        pump.cancel()
        await subscriber.close()
    }
}
