import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionWire
import Synchronization
import Testing

/// The publisher's in-flight window against a client that only records: QoS 1 messages stop at the window
/// and resume as acknowledgements arrive, in order, none lost, QoS 0 messages never wait for acknowledgements.
@Suite struct OutboxPublisherWindowTests {
    /// Hands out message ids and counts what is unacknowledged; publishes nothing.
    final class RecordingBroker: BrokerClient {
        struct State {
            var nextID: Int32 = 1
            var published: [(id: Int32, qos: Int, first: UInt8)] = []
            var unacknowledged = Set<Int32>()
            var mostUnacknowledged = 0
            /// The expiry each message was handed over with, in order (0: none).
            var expiries: [UInt32] = []
        }

        let state = Mutex(State())
        let events = AsyncStream<BrokerEvent> { _ in }
        var isConnected: Bool { true }
        var droppedInboundCount: Int { 0 }

        /// What the publisher installed; the test plays the network thread through it.
        let handler = Mutex<(any BrokerAcknowledgementHandler)?>(nil)

        func setAcknowledgementHandler(_ handler: (any BrokerAcknowledgementHandler)?) {
            self.handler.withLock { $0 = handler }
        }

        func connect(_ options: BrokerConnectOptions) throws(BrokerError) {}
        func disconnect(flushTimeout: Double) async {}
        func publishResponse(topic: String, payload: [UInt8], correlationData: [UInt8]?) throws(BrokerError) {}
        func subscribe(_ filters: [String], qos: Int) throws(BrokerError) {}

        func publish(
            topic: String,
            payload: UnsafeRawBufferPointer,
            qos: Int,
            retain: Bool,
            expirySeconds: UInt32
        ) throws(BrokerError)
            -> Int32
        {
            state.withLock { state in
                let id = state.nextID
                state.nextID += 1
                state.published.append((id, qos, payload[0]))
                state.expiries.append(expirySeconds)
                if qos > 0 {
                    state.unacknowledged.insert(id)
                    state.mostUnacknowledged = max(state.mostUnacknowledged, state.unacknowledged.count)
                }
                return id
            }
        }

        /// Removes and returns every unacknowledged id, oldest first.
        func takeUnacknowledged() -> [Int32] {
            state.withLock { state in
                defer { state.unacknowledged.removeAll() }
                return state.unacknowledged.sorted()
            }
        }
    }

    private func enqueue(_ outbox: Outbox, count: Int, qos: Int, firstByte: (Int) -> UInt8) {
        for index in 0..<count {
            let bytes = [firstByte(index), 0, 0, 0]
            bytes.withUnsafeBytes { _ = outbox.enqueue(topicID: 0, qos: qos, retain: false, payload: $0) }
        }
    }

    /// How many turns (each at least a 1-ms sleep) a wait below takes before it gives up: a budget of the test's
    /// own turns, not a wall-clock deadline. The tests are about order and the window, not speed, and on a loaded
    /// 2-core host the suite's CPU-bound tests hold the cooperative threads for long stretches: in a fresh-clone
    /// CI run 117 unit tests, trivial ones among them, reported 35.8 s, and two of these loops found their 30-s
    /// deadline passed having seen none of what the publisher thread had done (50 of 120 published, no batch).
    static let turns = 30_000

    /// Sleeps a millisecond at a time until `done` holds or `turns` turns have passed.
    private func waitTurns(until done: () -> Bool) async {
        var turns = 0
        while !done(), turns < Self.turns {
            turns += 1
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Acknowledges whatever is outstanding until `count` messages were handed over, or until `turns` turns pass
    /// without one more (a loaded CI machine once got 197 of 300 through window 1 in a fixed 30 s while the
    /// publisher was making progress all along).
    private func acknowledgeUntil(
        _ count: Int,
        broker: RecordingBroker,
        publisher: OutboxPublisher,
        acknowledgeInReverse: Bool = false
    ) async {
        var turnsLeft = Self.turns
        var published = broker.state.withLock { $0.published.count }
        while published < count, turnsLeft > 0 {
            // The broker's count drops before the publisher hears of it, so it never exceeds the window.
            let ids = broker.takeUnacknowledged()
            for id in acknowledgeInReverse ? ids.reversed() : ids { publisher.acknowledge(contentsOf: [id]) }
            try? await Task.sleep(for: .milliseconds(1))
            let now = broker.state.withLock { $0.published.count }
            turnsLeft = now > published ? Self.turns : turnsLeft - 1
            published = now
        }
    }

    private func makePublisher(window: Int) -> (Outbox, RecordingBroker, OutboxPublisher) {
        let outbox = Outbox(capacityBytes: 1 << 16, capacityMessages: 1024)
        let topics = TopicTable()
        _ = topics.id(for: "test/window")
        let broker = RecordingBroker()
        var logger = Logger(label: "test.publisher")
        logger.logLevel = .critical
        let publisher = OutboxPublisher(outbox: outbox, topics: topics, broker: broker, window: window, logger: logger)
        return (outbox, broker, publisher)
    }

    @Test(arguments: [1, 8, 100])
    func qos1StaysWithinTheWindowAndAllGoOut(window: Int) async {
        let (outbox, broker, publisher) = makePublisher(window: window)
        enqueue(outbox, count: 300, qos: 1) { UInt8(truncatingIfNeeded: $0) }
        publisher.start()
        publisher.setConnected(true)
        await acknowledgeUntil(300, broker: broker, publisher: publisher, acknowledgeInReverse: window > 1)
        await publisher.stop(drainTimeout: 0)
        let state = broker.state.withLock { $0 }
        #expect(state.published.count == 300)
        #expect(state.published.map(\.first) == (0..<300).map { UInt8(truncatingIfNeeded: $0) })
        #expect(state.mostUnacknowledged <= window)
        #expect(state.mostUnacknowledged >= 1)
        #expect(outbox.snapshot.published == 300)
    }

    @Test func startInstallsThePublisherAsTheHandlerAndOneBatchReturnsTheWholeWindow() async throws {
        let (outbox, broker, publisher) = makePublisher(window: 50)
        enqueue(outbox, count: 120, qos: 1) { UInt8(truncatingIfNeeded: $0) }
        publisher.start()
        let handler = try #require(broker.handler.withLock { $0 }, "start() installs the acknowledgement handler")
        #expect(handler === publisher)
        publisher.setConnected(true)
        var batches = 0
        var turns = 0
        while broker.state.withLock({ $0.published.count }) < 120, turns < Self.turns {
            turns += 1
            // As the network thread does: one call per loop turn with every id it settled, in order.
            let ids = broker.takeUnacknowledged()
            if !ids.isEmpty {
                handler.brokerAcknowledged(ids[...])
                batches += 1
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        await publisher.stop(drainTimeout: 0)
        let state = broker.state.withLock { $0 }
        #expect(state.published.count == 120)
        #expect(state.mostUnacknowledged <= 50)
        #expect(batches >= 2, "a full window was returned in batches")
    }

    @Test func qos0GoesOutWithoutAcknowledgements() async {
        let (outbox, broker, publisher) = makePublisher(window: 4)
        enqueue(outbox, count: 200, qos: 0) { UInt8(truncatingIfNeeded: $0) }
        publisher.start()
        publisher.setConnected(true)
        await waitTurns { outbox.isEmpty }
        await publisher.stop(drainTimeout: 0)
        #expect(broker.state.withLock { $0.published.count } == 200)
    }

    @Test func aLostConnectionReturnsTheWindow() async {
        let (outbox, broker, publisher) = makePublisher(window: 5)
        enqueue(outbox, count: 12, qos: 1) { UInt8($0) }
        publisher.start()
        publisher.setConnected(true)
        await waitTurns { broker.state.withLock { $0.published.count } >= 5 }
        // No acknowledgement comes; the connection drops and comes back: the publisher, waiting on the full
        // window, continues with a fresh one (libmosquitto resends its own in-flight messages).
        publisher.setConnected(false)
        publisher.setConnected(true)
        await waitTurns { broker.state.withLock { $0.published.count } >= 10 }
        await publisher.stop(drainTimeout: 0)
        #expect(broker.state.withLock { $0.published.count } == 10)
    }
}
