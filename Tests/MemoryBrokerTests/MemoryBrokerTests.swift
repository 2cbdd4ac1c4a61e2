import AgentPorts
import MemoryBroker
import Synchronization
import Testing

/// MemoryBroker alone, on a manual clock, events read between pumps: what the contract suite cannot reach (hops per
/// pump, deterministic order, latency, kill, slow readers, flush deadlines, what a delivery carried).
@Suite("MemoryBroker")
struct MemoryBrokerTests {
    @Test("each packet moves one hop per pump; acknowledgements come in a pump, never from inside publish")
    func oneHopPerPump() throws {
        let world = World()
        let subscriber = world.broker.makeClient()
        try subscriber.connect(world.broker.connectOptions(clientID: "sub"))
        #expect(!subscriber.isConnected)
        #expect(world.broker.pump())  // CONNECT reaches the broker
        #expect(world.broker.connectedClientIDs == ["sub"])
        #expect(!subscriber.isConnected)
        #expect(world.broker.pump())  // CONNACK reaches the client
        #expect(subscriber.isConnected)
        #expect(subscriber.takeEvents() == [.connected(sessionPresent: false)])
        try subscriber.subscribe(["t/#"], qos: 1)
        world.broker.pump()

        let publisher = try world.connected("pub")
        let recorder = LockedRecorder()
        publisher.setAcknowledgementHandler(recorder)
        // The handler takes the lock the test holds across publish, as OutboxPublisher does: an acknowledgement
        // delivered from inside publish would deadlock here.
        let id = try recorder.lock.withLock { _ in try publisher.publish("t/a", "x", qos: 1) }
        #expect(recorder.acknowledged.isEmpty)
        world.broker.pump()  // PUBLISH → broker (routed, PUBACK sent)
        #expect(recorder.acknowledged.isEmpty)
        #expect(subscriber.takeEvents().isEmpty)
        world.broker.pump()  // PUBACK → publisher, PUBLISH → subscriber
        #expect(recorder.acknowledged == [[id]])
        #expect(subscriber.takeEvents().map(\.text) == ["t/a=x"])
        world.broker.pump()  // the subscriber's PUBACK → broker
        #expect(world.broker.heldMessageCount(clientID: "sub") == 0)
        #expect(!world.broker.pump())
    }

    @Test("acknowledgements of one pump reach the handler in one batch, in order")
    func acknowledgementsBatched() throws {
        let world = World()
        let publisher = try world.connected("pub")
        let recorder = LockedRecorder()
        publisher.setAcknowledgementHandler(recorder)
        let ids = try (0..<5).map { try publisher.publish("t", "m\($0)", qos: 1) }
        world.broker.pump()
        world.broker.pump()
        #expect(recorder.acknowledged == [ids])
        #expect(publisher.queuedMessageCount == 0)
    }

    @Test("the same schedule gives the same events, in connection creation order, run after run")
    func deterministic() throws {
        func run() throws -> [String] {
            let world = World()
            let subscriber = try world.connected("sub")
            try subscriber.subscribe(["#"], qos: 1)
            world.broker.pump()
            let publishers = try (0..<4).map { try world.connected("p\($0)") }
            for round in 0..<3 {
                // Published in reverse creation order; routed in creation order.
                for (index, publisher) in publishers.enumerated().reversed() {
                    try publisher.publish("p\(index)/r\(round)", "\(index)", qos: round % 2)
                }
                world.broker.pump()
            }
            world.broker.network.settle()
            return subscriber.takeEvents().map(\.text)
        }
        let first = try run()
        #expect(first.count == 12)
        #expect(Array(first.prefix(4)) == ["p0/r0=0", "p1/r0=1", "p2/r0=2", "p3/r0=3"])
        for _ in 0..<5 { #expect(try run() == first) }
    }

    @Test("with latency a packet waits until its time; nextDueTime says when")
    func latency() throws {
        let world = World(options: .init(latencySeconds: 0.25))
        let client = world.broker.makeClient()
        try client.connect(world.broker.connectOptions(clientID: "c"))
        #expect(world.broker.nextDueTime == world.clock.now() + 0.25)
        #expect(!world.broker.pump())
        world.clock.advance(by: 0.25)
        #expect(world.broker.pump())
        #expect(world.broker.connectedClientIDs == ["c"])
        #expect(!client.isConnected)
        #expect(world.broker.nextDueTime == world.clock.now() + 0.25)
        world.clock.advance(by: 0.3)
        #expect(world.broker.pump())
        #expect(client.isConnected)
        #expect(world.broker.nextDueTime == nil)
    }

    @Test("kill(): the broker publishes the will, the stream ends, nothing the client does gets out any more")
    func kill() async throws {
        let world = World()
        let watcher = try world.connected("watch")
        try watcher.subscribe(["status/#"], qos: 1)
        world.broker.pump()
        let victim = world.broker.makeClient()
        let recorder = LockedRecorder()
        victim.setAcknowledgementHandler(recorder)
        let will = BrokerWill(topic: "status/victim", payload: Array("offline".utf8), qos: 1, retain: true)
        try victim.connect(world.broker.connectOptions(clientID: "victim", will: will))
        world.broker.network.settle()
        _ = try victim.publish("data", "unacknowledged", qos: 1)
        victim.kill()
        #expect(!victim.isConnected)
        #expect(world.broker.connectedClientIDs == ["watch"])
        world.broker.network.settle()
        #expect(watcher.takeEvents().map(\.text) == ["status/victim=offline"])
        #expect(world.broker.retainedMessage(topic: "status/victim")?.payload == Array("offline".utf8))
        #expect(recorder.acknowledged.isEmpty)
        #expect(throws: BrokerError.self) { try victim.connect(world.broker.connectOptions(clientID: "victim")) }
        #expect(throws: BrokerError.self) { try victim.publish("data", "after", qos: 0) }
        var events: [BrokerEvent] = []
        for await event in victim.events { events.append(event) }
        #expect(events == [.connected(sessionPresent: false)], "no terminal event once dead; the stream ended")
    }

    @Test(
        "a slow reader takes readsPerPump messages a pump; QoS 0 is dropped once max_queued_messages wait unread"
    )
    func slowReader() throws {
        let world = World(options: .init(maxQueuedMessages: 10))
        let reader = world.broker.makeClient(readsPerPump: 2)
        try reader.connect(world.broker.connectOptions(clientID: "reader"))
        world.broker.network.settle()
        try reader.subscribe(["t"], qos: 0)
        world.broker.pump()
        _ = reader.takeEvents()
        let publisher = try world.connected("pub")
        for index in 0..<30 { try publisher.publish("t", "m\(index)", qos: 0) }
        // Routed in one pump: the 2 the reader takes at its next turn and 10 more wait; the other 18 are dropped.
        world.broker.pump()
        #expect(world.broker.drops(clientID: "reader") == MemoryBroker.Drops(queueFull: 18))
        world.broker.pump()
        #expect(reader.takeEvents().map(\.text) == ["t=m0", "t=m1"])
        // 10 wait unread, more than the reader takes next: more QoS 0 is dropped.
        for index in 30..<35 { try publisher.publish("t", "m\(index)", qos: 0) }
        world.broker.pump()
        #expect(world.broker.drops(clientID: "reader") == MemoryBroker.Drops(queueFull: 23))
        world.broker.network.settle()
        #expect(reader.takeEvents().map(\.text) == (2..<12).map { "t=m\($0)" })
    }

    @Test("disconnect flushes unacknowledged messages; a stalled flush ends at its deadline on the network's clock")
    func disconnectFlush() async throws {
        let world = World()
        let client = try world.connected("c")
        _ = try client.publish("t", "m", qos: 1)
        let done = Flag()
        let disconnecting = Task {
            await client.disconnect(flushTimeout: 5)
            done.set()
        }
        try await waitForSuspension()
        #expect(!done.isSet, "waits for the PUBACK")
        world.broker.pump()
        world.broker.pump()
        await disconnecting.value
        #expect(
            client.takeEvents().last
                == .disconnected(reason: "disconnected from memory:1883 as requested", expected: true)
        )
        world.broker.pump()
        #expect(world.broker.connectedClientIDs.isEmpty)

        try client.connect(world.broker.connectOptions(clientID: "c"))
        world.broker.network.settle()
        _ = client.takeEvents()
        world.broker.setStalled(clientID: "c", towardsBroker: true, towardsClient: false)
        _ = try client.publish("t", "stuck", qos: 1)
        let stalled = Task { await client.disconnect(flushTimeout: 5) }
        try await waitForSuspension()
        world.broker.pump()
        #expect(client.isConnected)
        world.clock.advance(by: 5)
        #expect(world.broker.nextDueTime == world.clock.now())
        world.broker.pump()
        await stalled.value
        #expect(!client.isConnected)
        #expect(client.queuedMessageCount == 1, "still held for the next connection")
    }

    @Test("a message queued for an offline session leaves with what remains of its expiry interval")
    func remainingExpiry() throws {
        let world = World()
        let deliveries = DeliveryLog()
        world.broker.setDeliveryObserver { delivery in deliveries.items.withLock { $0.append(delivery) } }
        let subscriber = world.broker.makeClient()
        let options = world.broker.connectOptions(clientID: "sub", cleanSession: false)
        try subscriber.connect(options)
        world.broker.network.settle()
        try subscriber.subscribe(["t"], qos: 1)
        world.broker.pump()
        world.broker.dropConnection(clientID: "sub")
        let publisher = try world.connected("pub")
        _ = try publisher.publish("t", "m", qos: 1, retain: false, expirySeconds: 10)
        world.broker.network.settle()
        world.clock.advance(by: 3.5)
        try subscriber.connect(options)
        world.broker.network.settle()
        let delivered = deliveries.items.withLock { $0 }
        #expect(delivered.map(\.messageExpirySeconds) == [7])
        #expect(subscriber.takeEvents().contains { $0.text == "t=m" })
    }

    @Test("restart(keepingStore:) keeps or loses the store whatever the persistence option says")
    func restartKeepingStore() throws {
        for (persistence, keeping) in [(true, false), (false, true)] {
            let world = World(options: .init(persistence: persistence))
            let publisher = try world.connected("pub")
            _ = try publisher.publish("r", "v", qos: 1, retain: true)
            let persistent = world.broker.makeClient()
            try persistent.connect(world.broker.connectOptions(clientID: "p", cleanSession: false))
            world.broker.network.settle()
            world.broker.restart(keepingStore: keeping)
            #expect(world.broker.retainedTopics == (keeping ? ["r"] : []))
            #expect(world.broker.sessionClientIDs == (keeping ? ["p"] : []))
            #expect(persistent.takeEvents().last.map(MemoryBrokerTests.isLost) == true)
        }
    }

    @Test("an MQTT 5 session expires its interval after the disconnect")
    func sessionExpiry() throws {
        let world = World()
        let client = world.broker.makeClient()
        var options = world.broker.connectOptions(clientID: "c", cleanSession: false)
        options.sessionExpirySeconds = 10
        try client.connect(options)
        world.broker.network.settle()
        world.broker.dropConnection(clientID: "c")
        world.clock.advance(by: 9)
        #expect(world.broker.sessionClientIDs == ["c"])
        world.clock.advance(by: 1)
        #expect(world.broker.sessionClientIDs.isEmpty)
        try client.connect(options)
        world.broker.network.settle()
        #expect(client.takeEvents().last == .connected(sessionPresent: false))
    }

    @Test(
        "a second connection with the same client id takes the session over; the first loses its connection, its will goes out"
    )
    func takeover() throws {
        let world = World()
        let watcher = try world.connected("watch")
        try watcher.subscribe(["will"], qos: 0)
        world.broker.pump()
        let first = world.broker.makeClient()
        let will = BrokerWill(topic: "will", payload: Array("gone".utf8), qos: 0, retain: false)
        try first.connect(world.broker.connectOptions(clientID: "same", will: will))
        world.broker.network.settle()
        let second = try world.connected("same")
        #expect(second.isConnected && !first.isConnected)
        #expect(
            first.takeEvents().last
                == .disconnected(reason: "connection to memory:1883 lost: The connection was lost", expected: false)
        )
        world.broker.network.settle()
        #expect(watcher.takeEvents().map(\.text) == ["will=gone"])
    }

    @Test("a client fails over to another broker of the network and resends what was not acknowledged")
    func failover() throws {
        let network = MemoryNetwork(now: ManualClock().now)
        let first = MemoryBroker(name: "a", network: network)
        let second = MemoryBroker(name: "b", network: network)
        let watcher = second.makeClient()
        try watcher.connect(second.connectOptions(clientID: "watch"))
        network.settle()
        try watcher.subscribe(["t"], qos: 1)
        network.settle()
        #expect(watcher.takeEvents() == [.connected(sessionPresent: false)])
        let client = first.makeClient()
        try client.connect(first.connectOptions(clientID: "agent"))
        network.settle()
        first.setStalled(clientID: "agent", towardsBroker: true, towardsClient: false)
        _ = try client.publish("t", "m", qos: 1)
        network.settle()
        first.stop()
        #expect(client.takeEvents().last.map(MemoryBrokerTests.isLost) == true)
        try client.connect(second.connectOptions(clientID: "agent"))
        network.settle()
        #expect(client.queuedMessageCount == 0)
        #expect(watcher.takeEvents().map(\.text) == ["t=m"])
        #expect(second.connectedClientIDs == ["watch", "agent"])
    }

    @Test("connect refused where no broker runs; a wrong password refused as authorization")
    func refusals() throws {
        let world = World(options: .init(users: ["agent": "secret"]))
        let client = world.broker.makeClient()
        try client.connect(BrokerConnectOptions(host: "nowhere", port: 1883, clientID: "c"))
        world.broker.pump()
        #expect(
            client.takeEvents()
                == [
                    .connectFailed(
                        code: 14,
                        reason:
                            "connect to nowhere:1883 failed: Connection refused — check mqtt.host and mqtt.port in config.yaml, or that the broker is running",
                        isAuthorization: false
                    )
                ]
        )
        try client.connect(world.broker.connectOptions(clientID: "c", username: "agent", password: "wrong"))
        world.broker.network.settle()
        guard case .connectFailed(0x86, _, true) = client.takeEvents().last else {
            Issue.record("expected a 0x86 refusal")
            return
        }
        world.broker.stop()
        try client.connect(world.broker.connectOptions(clientID: "c", username: "agent", password: "secret"))
        world.broker.network.settle()
        guard case .connectFailed(14, _, false) = client.takeEvents().last else {
            Issue.record("expected connection refused while stopped")
            return
        }
        world.broker.start()
        try client.connect(world.broker.connectOptions(clientID: "c", username: "agent", password: "secret"))
        world.broker.network.settle()
        #expect(client.isConnected)
    }

    @Test("events past the backlog limit are dropped and counted; connection events never are")
    func backlog() throws {
        let world = World()
        let reader = world.broker.makeClient(eventBacklogLimit: 3)
        try reader.connect(world.broker.connectOptions(clientID: "reader"))
        world.broker.network.settle()
        try reader.subscribe(["t"], qos: 0)
        world.broker.pump()
        let publisher = try world.connected("pub")
        for index in 0..<10 { try publisher.publish("t", "m\(index)", qos: 0) }
        world.broker.network.settle()
        world.broker.dropConnection(clientID: "reader")
        let events = reader.takeEvents()
        #expect(events.count == 5)
        #expect(events.first == .connected(sessionPresent: false))
        #expect(events.last.map(MemoryBrokerTests.isLost) == true)
        #expect(reader.droppedInboundCount == 7)
        #expect(reader.inboundDrops.lastBehindTopic == "t")
    }

    @Test("publish refuses past maxQueuedMessages: QoS > 0 awaiting acknowledgement, QoS 0 not yet written")
    func publishQueueBound() throws {
        let world = World()
        let client = world.broker.makeClient(maxQueuedMessages: 3)
        try client.connect(world.broker.connectOptions(clientID: "c"))
        world.broker.network.settle()
        for index in 0..<3 { try client.publish("t", "q\(index)", qos: 1) }
        let refused = #expect(throws: BrokerError.self) { try client.publish("t", "q3", qos: 1) }
        #expect(refused?.isPermanent == false)
        for index in 0..<3 { try client.publish("t", "z\(index)", qos: 0) }
        #expect(throws: BrokerError.self) { try client.publish("t", "z3", qos: 0) }
        #expect(client.queuedMessageCount == 6)
        world.broker.pump()  // the QoS 0 ones are written (they reached the broker)
        #expect(client.queuedMessageCount == 3)
        try client.publish("t", "z4", qos: 0)
        world.broker.pump()  // the PUBACKs come back
        #expect(client.queuedMessageCount == 0)
        try client.publish("t", "q4", qos: 1)
    }

    @Test("events past the backlog's bytes are dropped and counted as over budget")
    func backlogBytes() throws {
        let world = World()
        let reader = world.broker.makeClient(eventBacklogBytes: 100)
        try reader.connect(world.broker.connectOptions(clientID: "reader"))
        world.broker.network.settle()
        try reader.subscribe(["t"], qos: 0)
        world.broker.pump()
        let publisher = try world.connected("pub")
        let payload = String(repeating: "x", count: 40)
        for _ in 0..<4 { try publisher.publish("t", payload, qos: 0) }
        world.broker.network.settle()
        // 41 bytes each (payload and topic): two fit in 100, the others do not.
        #expect(reader.takeEvents().filter { $0.text.hasPrefix("t=") }.count == 2)
        #expect(reader.inboundDrops.behind == 2)
        #expect(reader.inboundDrops.overBudget == 2)
    }

    @Test(
        "topic filters: + one level, # the rest and its parent, no wildcard match for $ topics",
        arguments: [
            ("a/+/c", "a/b/c", true), ("a/+/c", "a/b/d", false), ("a/+", "a/", true), ("a/+", "a", false),
            ("a/#", "a", true), ("a/#", "a/b/c", true), ("a/#", "ab", false), ("#", "a/b", true),
            ("#", "$SYS/x", false), ("+/x", "$SYS/x", false), ("$SYS/#", "$SYS/x", true), ("+", "a/b", false),
            ("a/b", "a/b", true), ("a/b", "a/bc", false), ("+/+", "/x", true),
        ]
    )
    func topicFilters(filter: String, topic: String, matches: Bool) throws {
        let world = World()
        let subscriber = try world.connected("sub")
        try subscriber.subscribe([filter], qos: 0)
        world.broker.pump()
        let publisher = try world.connected("pub")
        try publisher.publish(topic, "x", qos: 0)
        world.broker.network.settle()
        #expect(subscriber.takeEvents().contains { $0.text == "\(topic)=x" } == matches)
    }

    @Test("invalid topics and filters are refused as permanent before anything is sent")
    func invalidNames() throws {
        let world = World()
        let client = try world.connected("c")
        for topic in ["", "a/+", "a/#"] {
            let error = #expect(throws: BrokerError.self) { try client.publish(topic, "x", qos: 0) }
            #expect(error?.isPermanent == true)
        }
        for filter in ["a/b#", "a+/b", "#/a", ""] {
            #expect(throws: BrokerError.self) { try client.subscribe([filter], qos: 0) }
        }
        #expect(!world.broker.pump())
    }

    // MARK: Helpers

    static func isLost(_ event: BrokerEvent) -> Bool {
        if case .disconnected(_, false) = event { return true }
        return false
    }

    /// Lets a task started just before run until it suspends.
    private func waitForSuspension() async throws {
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// A broker named "memory" on a manual clock.
struct World {
    let clock = ManualClock()
    let broker: MemoryBroker

    init(options: MemoryBroker.Options = .init()) {
        broker = MemoryBroker(name: "memory", options: options, now: clock.now)
    }

    /// A client connected (events taken) as `clientID`.
    func connected(_ clientID: String) throws -> MemoryBrokerClient {
        let client = broker.makeClient()
        try client.connect(broker.connectOptions(clientID: clientID))
        broker.network.settle()
        _ = client.takeEvents()
        return client
    }
}

final class ManualClock: Sendable {
    private let seconds = Mutex<Double>(100)

    var now: @Sendable () -> Double {
        { [self] in seconds.withLock { $0 } }
    }

    func advance(by delta: Double) {
        seconds.withLock { $0 += delta }
    }
}

/// An acknowledgement handler that, like OutboxPublisher, takes a lock its owner also holds across `publish`.
final class LockedRecorder: BrokerAcknowledgementHandler {
    let lock = Mutex<Void>(())
    private let batches = Mutex<[[Int32]]>([])

    func brokerAcknowledged(_ messageIDs: ArraySlice<Int32>) {
        lock.withLock { _ in batches.withLock { $0.append(Array(messageIDs)) } }
    }

    var acknowledged: [[Int32]] { batches.withLock { $0 } }
}

final class DeliveryLog: Sendable {
    let items = Mutex<[MemoryBroker.Delivery]>([])
}

final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

extension BrokerEvent {
    /// "topic=payload" for a message, the event otherwise.
    var text: String {
        if case .message(let message) = self {
            return "\(message.topic)=\(String(decoding: message.payload, as: UTF8.self))"
        }
        return "\(self)"
    }
}

extension MemoryBrokerClient {
    @discardableResult
    func publish(
        _ topic: String,
        _ text: String,
        qos: Int,
        retain: Bool = false,
        expirySeconds: UInt32 = 0
    ) throws -> Int32 {
        try Array(text.utf8).withUnsafeBytes {
            try publish(topic: topic, payload: $0, qos: qos, retain: retain, expirySeconds: expirySeconds)
        }
    }
}
