import AgentPipeline
import AgentPorts
import Logging
import MemoryBroker
import Testing

/// The agent's OutboxPublisher on a MemoryBrokerClient: it holds its in-flight lock across `publish` and its
/// acknowledgement handler takes the same lock, so acknowledgements delivered from inside `publish` would deadlock.
/// Its own thread publishes while this test pumps.
@Suite struct OutboxPublisherOverMemoryBrokerTests {
    @Test(arguments: [1, 20])
    func everyMessageArrivesInOrderWithinTheWindow(window: Int) async throws {
        let world = World()
        let subscriber = try world.connected("sub")
        try subscriber.subscribe(["agent/#"], qos: 1)
        world.broker.pump()
        let client = try world.connected("agent")

        let outbox = Outbox(capacityBytes: 1 << 16, capacityMessages: 1024)
        let topics = TopicTable()
        let topic = topics.id(for: "agent/data")
        var logger = Logger(label: "test.publisher")
        logger.logLevel = .critical
        let publisher = OutboxPublisher(outbox: outbox, topics: topics, broker: client, window: window, logger: logger)
        for index in 0..<300 {
            [UInt8(truncatingIfNeeded: index), UInt8(index >> 8)].withUnsafeBytes {
                _ = outbox.enqueue(topicID: topic, qos: 1, retain: false, payload: $0)
            }
        }
        publisher.start()
        publisher.setConnected(true)
        var received: [BrokerEvent] = []
        var idleTurns = 0
        // A budget of idle turns (1 ms each), not a deadline: the publisher thread may be starved on a loaded host.
        while received.count < 300, idleTurns < 30_000 {
            let moved = world.broker.pump()
            received += subscriber.takeEvents()
            idleTurns = moved ? 0 : idleTurns + 1
            try await Task.sleep(for: .milliseconds(1))
        }
        await publisher.stop(drainTimeout: 0)
        let payloads = received.compactMap { event -> Int? in
            guard case .message(let message) = event else { return nil }
            return Int(message.payload[0]) | Int(message.payload[1]) << 8
        }
        #expect(payloads == Array(0..<300))
        #expect(client.queuedMessageCount == 0)
        #expect(outbox.snapshot.published == 300)
    }
}
