import AgentPorts
import MemoryBroker
import Testing

/// The same cases against a real mosquitto and MemoryBroker: what the agent relies on from its broker, held to
/// mosquitto so the in-memory broker cannot drift from it. Every case names its topics after a unique base, and
/// waits for what it expects (mosquitto: bounded waits; memory: pumps). What must not arrive is checked after a
/// probe sent later has arrived (`ContractBroker.sync`).
@Suite("The broker contract: mosquitto and MemoryBroker", .timeLimit(.minutes(2)))
struct BrokerContractTests {
    @Test(
        "retained: set, replaced, deleted by an empty payload; sent with the retain flag on every subscribe",
        arguments: BrokerKind.allCases
    )
    func retained(kind: BrokerKind) async throws {
        try await kind.run { broker in
            let base = uniqueName("retained")
            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))
            try await broker.subscribe(publisher, [])
            try publisher.publish("\(base)/a", "1", qos: 1, retain: true)
            try publisher.publish("\(base)/a", "2", qos: 1, retain: true)
            try publisher.publish("\(base)/b", "x", qos: 0, retain: true)
            try await broker.sync(from: publisher, to: publisher)

            let subscriber = try broker.makeClient("sub")
            try await broker.connect(subscriber, broker.connectOptions(for: subscriber))
            try await broker.subscribe(subscriber, ["\(base)/#"])
            let first = subscriber.messages(under: base)
            #expect(first.count == 2)
            #expect(Set(first.map(Self.describe)) == ["a=2 retained q1", "b=x retained q0"])

            // Deleted: a subscriber already there gets the empty message live, without the retain flag.
            try publisher.publish("\(base)/a", "", qos: 1, retain: true)
            try await broker.sync(from: publisher, to: subscriber)
            #expect(subscriber.messages(under: base).dropFirst(2).map(Self.describe) == ["a= live q1"])

            // The same filter subscribed again brings the retained messages again (the agent refetches its desired
            // documents so).
            try await broker.subscribe(subscriber, ["\(base)/#"])
            #expect(subscriber.messages(under: base).dropFirst(3).map(Self.describe) == ["b=x retained q0"])

            let late = try broker.makeClient("late")
            try await broker.connect(late, broker.connectOptions(for: late))
            try await broker.subscribe(late, ["\(base)/#"], qos: 0)
            #expect(late.messages(under: base).map(Self.describe) == ["b=x retained q0"])
        }
    }

    @Test(
        "QoS 1 is acknowledged to the handler once per id; subscribers get the lower of the two QoS",
        arguments: BrokerKind.allCases
    )
    func qos1Acknowledged(kind: BrokerKind) async throws {
        try await kind.run { broker in
            let base = uniqueName("qos")
            let atMostOnce = try broker.makeClient("sub0")
            let atLeastOnce = try broker.makeClient("sub1")
            for subscriber in [atMostOnce, atLeastOnce] {
                try await broker.connect(subscriber, broker.connectOptions(for: subscriber))
            }
            try await broker.subscribe(atMostOnce, ["\(base)/#"], qos: 0)
            try await broker.subscribe(atLeastOnce, ["\(base)/#"], qos: 1)
            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))
            var ids: [Int32] = []
            for index in 0..<50 { ids.append(try publisher.publish("\(base)/n", "m\(index)", qos: 1)) }
            try publisher.publish("\(base)/zero", "z", qos: 0)
            #expect(Set(ids).count == 50)
            try await broker.waitUntil("50 acknowledgements") { publisher.acknowledgements.acknowledged.count >= 50 }
            try await broker.sync(from: publisher, to: atMostOnce)
            try await broker.sync(from: publisher, to: atLeastOnce)
            let acknowledged = publisher.acknowledgements.acknowledged.filter { ids.contains($0) }
            #expect(acknowledged.sorted() == ids.sorted(), "each id once")
            // The probes' own acknowledgements may still be on their way.
            try await broker.waitUntil("nothing queued at the publisher") { publisher.queuedMessageCount == 0 }
            // The QoS 0 message is not held behind QoS 1 messages waiting for the window: where it lands among
            // them is a race on mosquitto.
            let numbered = (0..<50).map { "m\($0)" }
            #expect(atMostOnce.messages(under: "\(base)/n").texts == numbered)
            #expect(atMostOnce.messages(under: base).allSatisfy { $0.qos == 0 && !$0.retain })
            #expect(atLeastOnce.messages(under: "\(base)/n").texts == numbered)
            #expect(atLeastOnce.messages(under: "\(base)/n").allSatisfy { $0.qos == 1 && !$0.retain })
            for subscriber in [atMostOnce, atLeastOnce] {
                #expect(subscriber.messages(under: "\(base)/zero").map(Self.describe) == ["zero=z live q0"])
            }
        }
    }

    @Test(
        "QoS 1 messages a persistent session had not acknowledged are sent again after its connection dropped",
        arguments: BrokerKind.allCases
    )
    func redeliveredAfterDrop(kind: BrokerKind) async throws {
        try await kind.run { broker in
            let base = uniqueName("redeliver")
            let subscriber = try broker.makeClient("sub")
            let options = broker.connectOptions(for: subscriber, cleanSession: false)
            #expect(try await broker.connect(subscriber, options) == false)
            try await broker.subscribe(subscriber, ["\(base)/#"])
            // Its PUBACKs never reach the broker.
            broker.stall(subscriber, towardsBroker: true, towardsClient: false)
            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))
            for index in 0..<5 { try publisher.publish("\(base)/m", "m\(index)", qos: 1) }
            try await broker.waitUntil("5 messages at the subscriber") { subscriber.messages(under: base).count == 5 }

            broker.cut(subscriber)
            let terminal = try await broker.waitForTerminal(subscriber)
            #expect(Self.isLost(terminal), "\(terminal)")
            broker.stall(subscriber, towardsBroker: false, towardsClient: false)
            #expect(try await broker.connect(subscriber, options) == true)
            try await broker.waitUntil("the 5 again") { subscriber.messages(under: base).count >= 10 }
            try await broker.sync(from: publisher, to: subscriber)
            let texts = subscriber.messages(under: base).texts
            #expect(texts == (0..<5).map { "m\($0)" } + (0..<5).map { "m\($0)" })
        }
    }

    @Test(
        "a clean session loses its subscriptions at disconnect; a persistent one keeps them and what came meanwhile",
        arguments: BrokerKind.allCases
    )
    func cleanAndPersistentSessions(kind: BrokerKind) async throws {
        try await kind.run { broker in
            let base = uniqueName("session")
            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))

            let clean = try broker.makeClient("clean")
            let cleanOptions = broker.connectOptions(for: clean)
            try await broker.connect(clean, cleanOptions)
            try await broker.subscribe(clean, ["\(base)/clean/#"])
            await broker.disconnect(clean)
            #expect(try await broker.connect(clean, cleanOptions) == false)
            try await broker.subscribe(clean, [])
            try publisher.publish("\(base)/clean/x", "lost", qos: 1)
            try await broker.sync(from: publisher, to: clean)
            #expect(clean.messages(under: base).isEmpty)

            let persistent = try broker.makeClient("persistent")
            let persistentOptions = broker.connectOptions(for: persistent, cleanSession: false)
            #expect(try await broker.connect(persistent, persistentOptions) == false)
            try await broker.subscribe(persistent, ["\(base)/kept/#"])
            await broker.disconnect(persistent)
            try await broker.waitUntilBrokerEnded(persistent.name, times: 1)
            try publisher.publish("\(base)/kept/x", "while away", qos: 1)
            try await broker.waitUntil("the publish acknowledged") {
                publisher.acknowledgements.acknowledged.count >= 1
            }
            #expect(try await broker.connect(persistent, persistentOptions) == true)
            try await broker.sync(from: publisher, to: persistent)
            #expect(persistent.messages(under: base).texts == ["while away"])
        }
    }

    @Test(
        "an MQTT 5 session expires its Session Expiry Interval after the disconnect, and its queue with it",
        arguments: BrokerKind.allCases
    )
    func sessionExpiry(kind: BrokerKind) async throws {
        try await kind.run { broker in
            let base = uniqueName("expiring")
            let subscriber = try broker.makeClient("sub")
            var options = broker.connectOptions(for: subscriber, cleanSession: false)
            options.sessionExpirySeconds = 1
            try await broker.connect(subscriber, options)
            try await broker.subscribe(subscriber, ["\(base)/#"])
            await broker.disconnect(subscriber)
            try await broker.waitUntilBrokerEnded(subscriber.name, times: 1)
            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))
            try publisher.publish("\(base)/x", "queued", qos: 1)
            try await broker.waitUntil("the publish acknowledged") {
                publisher.acknowledgements.acknowledged.count >= 1
            }
            // Whole seconds on mosquitto's clock, and a check once a second: 1 s can last up to 3.
            await broker.passTime(seconds: 3.2)
            #expect(try await broker.connect(subscriber, options) == false)
            try await broker.subscribe(subscriber, [])
            try await broker.sync(from: publisher, to: subscriber)
            #expect(subscriber.messages(under: base).isEmpty)
        }
    }

    @Test(
        "overlapping subscriptions: an MQTT 5 client gets a copy per subscription, an MQTT 3.1.1 client one",
        arguments: BrokerKind.allCases,
        MQTTProtocolVersion.allCases
    )
    func overlappingSubscriptions(kind: BrokerKind, version: MQTTProtocolVersion) async throws {
        try await kind.run { broker in
            let base = uniqueName("overlap")
            let subscriber = try broker.makeClient("sub")
            try await broker.connect(subscriber, broker.connectOptions(for: subscriber, protocolVersion: version))
            try await broker.subscribe(subscriber, ["\(base)/#", "\(base)/+/c"])
            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))
            try publisher.publish("\(base)/b/c", "both", qos: 1)
            try publisher.publish("\(base)/b", "one", qos: 1)
            try await broker.sync(from: publisher, to: subscriber)
            #expect(
                subscriber.messages(under: base).texts.sorted()
                    == (version == .v5 ? ["both", "both", "one"] : ["both", "one"])
            )
        }
    }

    @Test(
        "an offline persistent session holds max_queued_messages QoS 1 messages and drops the rest, and no QoS 0",
        arguments: BrokerKind.allCases
    )
    func offlineQueueLimit(kind: BrokerKind) async throws {
        try await kind.run(ContractOptions(maxQueuedMessages: 5)) { broker in
            let base = uniqueName("offline")
            let subscriber = try broker.makeClient("sub")
            let options = broker.connectOptions(for: subscriber, cleanSession: false)
            try await broker.connect(subscriber, options)
            try await broker.subscribe(subscriber, ["\(base)/#"])
            await broker.disconnect(subscriber)
            try await broker.waitUntilBrokerEnded(subscriber.name, times: 1)

            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))
            try await broker.subscribe(publisher, [])
            for index in 0..<12 {
                try publisher.publish("\(base)/q", "q\(index)", qos: 1)
                if index % 4 == 0 { try publisher.publish("\(base)/z", "z\(index)", qos: 0) }
            }
            try await broker.sync(from: publisher, to: publisher)
            #expect(try await broker.connect(subscriber, options) == true)
            try await broker.sync(from: publisher, to: subscriber)
            #expect(subscriber.messages(under: base).texts == (0..<5).map { "q\($0)" })
            if let memory = broker as? MemoryContractBroker {
                #expect(
                    memory.broker.drops(clientID: subscriber.name) == MemoryBroker.Drops(queueFull: 7, offlineQoS0: 3)
                )
            }
        }
    }

    @Test(
        "a connected subscriber that stops acknowledging gets the in-flight window, then max_queued_messages more",
        arguments: BrokerKind.allCases
    )
    func slowSubscriberQoS1(kind: BrokerKind) async throws {
        try await kind.run(ContractOptions(maxQueuedMessages: 5)) { broker in
            let base = uniqueName("slow")
            let subscriber = try broker.makeClient("sub")
            try await broker.connect(subscriber, broker.connectOptions(for: subscriber))
            try await broker.subscribe(subscriber, ["\(base)/#"])
            let watcher = try broker.makeClient("watch")
            try await broker.connect(watcher, broker.connectOptions(for: watcher))
            try await broker.subscribe(watcher, ["\(base)/#"])
            // The subscription's probe is out of the window before the acknowledgements stop.
            try await broker.settle(subscriber)
            broker.stall(subscriber, towardsBroker: true, towardsClient: false)

            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))
            // In bursts the watcher keeps up with (a burst beyond its window and queue would drop for it too).
            for burst in 0..<4 {
                for index in (burst * 10)..<(burst * 10 + 10) {
                    try publisher.publish("\(base)/m", "m\(index)", qos: 1)
                }
                try await broker.sync(from: publisher, to: watcher)
            }
            // QoS 0 while the subscriber's QoS 1 window and queue are full.
            for index in 0..<3 { try publisher.publish("\(base)/zero", "z\(index)", qos: 0) }
            try await broker.sync(from: publisher, to: watcher)
            try await broker.waitUntil("the window's 20 at the subscriber") {
                subscriber.messages(under: "\(base)/m").count >= 20
            }
            await broker.passTime(seconds: 0.3)
            #expect(subscriber.messages(under: "\(base)/m").count == 20)
            let zeros = subscriber.messages(under: "\(base)/zero").texts

            broker.stall(subscriber, towardsBroker: false, towardsClient: false)
            try await broker.waitUntil("the 5 queued") { subscriber.messages(under: "\(base)/m").count >= 25 }
            try await broker.sync(from: publisher, to: subscriber)
            #expect(subscriber.messages(under: "\(base)/m").texts == (0..<25).map { "m\($0)" })
            #expect(zeros == ["z0", "z1", "z2"], "QoS 0 is not held back by a full QoS 1 queue")
            if let memory = broker as? MemoryContractBroker {
                #expect(memory.broker.drops(clientID: subscriber.name).queueFull == 15)
            }
        }
    }

    @Test(
        "QoS 0 to a connected subscriber that stops reading is dropped once its queue is full",
        arguments: BrokerKind.allCases
    )
    func stalledReaderQoS0(kind: BrokerKind) async throws {
        try await kind.run(ContractOptions(maxQueuedMessages: 5)) { broker in
            let base = uniqueName("stalled")
            let subscriber = try broker.makeClient("sub")
            try await broker.connect(subscriber, broker.connectOptions(for: subscriber))
            try await broker.subscribe(subscriber, ["\(base)/#"], qos: 0)
            // Only a sync point (its QoS 1 probe): once it is back, mosquitto has routed all that came before.
            let watcher = try broker.makeClient("watch")
            try await broker.connect(watcher, broker.connectOptions(for: watcher))
            try await broker.subscribe(watcher, [])
            broker.stall(subscriber, towardsBroker: false, towardsClient: true)

            // 400 × 64 KiB: more than the sockets between mosquitto and the stalled reader hold.
            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))
            let payload = [UInt8](repeating: 0x2A, count: 64 * 1024)
            for _ in 0..<400 { try publisher.publish("\(base)/z", payload, qos: 0) }
            try await broker.sync(from: publisher, to: watcher)

            broker.stall(subscriber, towardsBroker: false, towardsClient: false)
            // While the backlog drains, a QoS 0 probe may be dropped too: probe until one arrives.
            try await broker.syncRepeating(from: publisher, to: subscriber)
            let received = subscriber.messages(under: base).count
            #expect(received >= 5 && received < 400, "received \(received) of 400")
            if let memory = broker as? MemoryContractBroker {
                #expect(received == 5)
                // 395, and any probe that met the draining backlog.
                #expect(memory.broker.drops(clientID: subscriber.name).queueFull >= 395)
            }
        }
    }

    @Test("the will is published when the connection drops, not after DISCONNECT", arguments: BrokerKind.allCases)
    func will(kind: BrokerKind) async throws {
        try await kind.run { broker in
            let base = uniqueName("will")
            let watcher = try broker.makeClient("watch")
            try await broker.connect(watcher, broker.connectOptions(for: watcher))
            try await broker.subscribe(watcher, ["\(base)/#"])

            let polite = try broker.makeClient("polite")
            let politeWill = BrokerWill(topic: "\(base)/polite", payload: Array("lost".utf8), qos: 1, retain: true)
            try await broker.connect(polite, broker.connectOptions(for: polite, will: politeWill))
            await broker.disconnect(polite)
            #expect(Self.isRequested(try await broker.waitForTerminal(polite)))
            try await broker.waitUntilBrokerEnded(polite.name, times: 1)

            let dropped = try broker.makeClient("dropped")
            let droppedWill = BrokerWill(topic: "\(base)/dropped", payload: Array("lost".utf8), qos: 1, retain: true)
            try await broker.connect(dropped, broker.connectOptions(for: dropped, will: droppedWill))
            broker.cut(dropped)
            #expect(Self.isLost(try await broker.waitForTerminal(dropped)))
            try await broker.waitUntil("the will") { watcher.messages(under: base).count >= 1 }
            try await broker.sync(from: watcher, to: watcher)
            #expect(watcher.messages(under: base).map(Self.describe) == ["dropped=lost live q1"])

            let late = try broker.makeClient("late")
            try await broker.connect(late, broker.connectOptions(for: late))
            try await broker.subscribe(late, ["\(base)/#"])
            #expect(late.messages(under: base).map(Self.describe) == ["dropped=lost retained q1"])
        }
    }

    @Test(
        "response topic and correlation data reach an MQTT 5 subscriber and not an MQTT 3.1.1 one",
        arguments: BrokerKind.allCases,
        MQTTProtocolVersion.allCases
    )
    func requestResponse(kind: BrokerKind, version: MQTTProtocolVersion) async throws {
        try await kind.run { broker in
            let base = uniqueName("rr")
            let responder = try broker.makeClient("responder")
            try await broker.connect(responder, broker.connectOptions(for: responder, protocolVersion: version))
            try await broker.subscribe(responder, ["\(base)/request"])
            let requester = try broker.makeClient("requester")
            try await broker.connect(requester, broker.connectOptions(for: requester))
            try await broker.subscribe(requester, ["\(base)/response"])

            let correlation = Array("corr-42".utf8)
            try requester.publishRequest(
                "\(base)/request",
                "status?",
                responseTopic: "\(base)/response",
                correlationData: correlation
            )
            try await broker.waitUntil("the request") { responder.messages(under: base).count == 1 }
            let request = try #require(responder.messages(under: base).first)
            #expect(request.payload == Array("status?".utf8))
            #expect(request.responseTopic == (version == .v5 ? "\(base)/response" : nil))
            #expect(request.correlationData == (version == .v5 ? correlation : nil))

            try responder.client.publishResponse(
                topic: "\(base)/response",
                payload: Array("ok".utf8),
                correlationData: request.correlationData ?? correlation
            )
            try await broker.waitUntil("the response") { requester.messages(under: base).count == 1 }
            let response = try #require(requester.messages(under: base).first)
            #expect(response.payload == Array("ok".utf8))
            #expect(response.correlationData == (version == .v5 ? correlation : nil))
            #expect(response.responseTopic == nil)
        }
    }

    @Test(
        "a queued message past its expiry is not delivered, and an expired retained message is gone",
        arguments: BrokerKind.allCases
    )
    func messageExpiry(kind: BrokerKind) async throws {
        try await kind.run { broker in
            let base = uniqueName("expiry")
            let subscriber = try broker.makeClient("sub")
            let options = broker.connectOptions(for: subscriber, cleanSession: false)
            try await broker.connect(subscriber, options)
            try await broker.subscribe(subscriber, ["\(base)/queued/#"])
            await broker.disconnect(subscriber)
            try await broker.waitUntilBrokerEnded(subscriber.name, times: 1)

            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))
            try publisher.publish("\(base)/queued/short", "short", qos: 1, expirySeconds: 1)
            try publisher.publish("\(base)/queued/long", "long", qos: 1, expirySeconds: 60)
            try publisher.publish("\(base)/retained/short", "short", qos: 1, retain: true, expirySeconds: 1)
            try publisher.publish("\(base)/retained/long", "long", qos: 1, retain: true, expirySeconds: 60)
            try await broker.waitUntil("4 acknowledgements") { publisher.acknowledgements.acknowledged.count >= 4 }
            // mosquitto counts expiry in whole seconds of its clock: 1 s can last up to 2.
            await broker.passTime(seconds: 2.5)

            #expect(try await broker.connect(subscriber, options) == true)
            try await broker.sync(from: publisher, to: subscriber)
            #expect(subscriber.messages(under: base).texts == ["long"])
            let late = try broker.makeClient("late")
            try await broker.connect(late, broker.connectOptions(for: late))
            try await broker.subscribe(late, ["\(base)/retained/#"])
            #expect(late.messages(under: base).map(Self.describe) == ["long=long retained q1"])
            if let memory = broker as? MemoryContractBroker {
                #expect(memory.broker.drops(clientID: subscriber.name).expired == 1)
                #expect(memory.broker.retainedMessage(topic: "\(base)/retained/short") == nil)
            }
        }
    }

    @Test(
        "maximum packet size: MQTT 5 is never sent a larger message (a QoS 1 one keeps its in-flight slot until the next connection); MQTT 3.1.1 drops it itself",
        arguments: BrokerKind.allCases,
        MQTTProtocolVersion.allCases
    )
    func maximumPacketSize(kind: BrokerKind, version: MQTTProtocolVersion) async throws {
        try await kind.run { broker in
            let base = uniqueName("size")
            let subscriber = try broker.makeClient("sub")
            let options = broker.connectOptions(
                for: subscriber,
                protocolVersion: version,
                cleanSession: false,
                maximumPacketSize: 300
            )
            try await broker.connect(subscriber, options)
            try await broker.subscribe(subscriber, ["\(base)/#"])
            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))
            let big = [UInt8](repeating: 0x42, count: 1000)
            for _ in 0..<5 { try publisher.publish("\(base)/big", big, qos: 1) }
            try publisher.publish("\(base)/small", "1", qos: 1)
            try await broker.sync(from: publisher, to: subscriber)
            #expect(subscriber.messages(under: base).texts == ["1"])
            // "1" and the probe have left the window only once the broker has their acknowledgements.
            try await broker.settle(subscriber)

            // 20 too large in all: on MQTT 5 the broker's window (20) is used up by them, and the next QoS 1
            // message waits for a new connection; QoS 0 still passes.
            for _ in 0..<15 { try publisher.publish("\(base)/big", big, qos: 1) }
            try publisher.publish("\(base)/small", "2", qos: 1)
            try publisher.publish("\(base)/mark", "m", qos: 0)
            try await broker.waitUntil("the QoS 0 mark") { subscriber.hasMessage(topic: "\(base)/mark") }
            await broker.passTime(seconds: 0.3)
            // Sorted: QoS 0 may overtake a QoS 1 message waiting for the window (mosquitto under load does).
            #expect(
                subscriber.messages(under: base).texts.sorted() == (version == .v5 ? ["1", "m"] : ["1", "2", "m"])
            )
            #expect(subscriber.client.inboundDrops.oversize == (version == .v5 ? 0 : 20))
            if let memory = broker as? MemoryContractBroker {
                #expect(memory.broker.drops(clientID: subscriber.name).oversize == (version == .v5 ? 20 : 0))
            }
            if version == .v5 {
                await broker.disconnect(subscriber)
                try await broker.connect(subscriber, options)
                try await broker.waitUntil("the held message") { subscriber.messages(under: base).count == 3 }
                try await broker.sync(from: publisher, to: subscriber)
                #expect(subscriber.messages(under: base).texts == ["1", "m", "2"])
            }
        }
    }

    @Test(
        "a broker restart keeps retained messages (wills of its clients included) and persistent sessions with persistence, loses them without",
        arguments: BrokerKind.allCases,
        [true, false]
    )
    func restart(kind: BrokerKind, persistence: Bool) async throws {
        try await kind.run(ContractOptions(persistence: persistence)) { broker in
            let base = uniqueName("restart")
            let publisher = try broker.makeClient("pub")
            let publisherOptions = broker.connectOptions(for: publisher)
            try await broker.connect(publisher, publisherOptions)
            try publisher.publish("\(base)/kept", "retained", qos: 1, retain: true)
            let subscriber = try broker.makeClient("sub")
            let subscriberOptions = broker.connectOptions(for: subscriber, cleanSession: false)
            try await broker.connect(subscriber, subscriberOptions)
            try await broker.subscribe(subscriber, ["\(base)/queued/#"])
            await broker.disconnect(subscriber)
            try await broker.waitUntilBrokerEnded(subscriber.name, times: 1)
            try publisher.publish("\(base)/queued/x", "queued", qos: 1)
            // Connected through the stop, with a retained will.
            let bystander = try broker.makeClient("bystander")
            let will = BrokerWill(topic: "\(base)/will", payload: Array("lost".utf8), qos: 1, retain: true)
            try await broker.connect(bystander, broker.connectOptions(for: bystander, will: will))
            try await broker.waitUntil("2 acknowledgements") { publisher.acknowledgements.acknowledged.count >= 2 }

            await broker.stop()
            #expect(Self.isLost(try await broker.waitForTerminal(bystander)))
            #expect(Self.isLost(try await broker.waitForTerminal(publisher)))
            try await broker.start()

            #expect(try await broker.connect(subscriber, subscriberOptions) == persistence)
            try await broker.subscribe(subscriber, [])
            try await broker.connect(publisher, publisherOptions)
            try await broker.sync(from: publisher, to: subscriber)
            #expect(subscriber.messages(under: base).texts == (persistence ? ["queued"] : []))
            let late = try broker.makeClient("late")
            try await broker.connect(late, broker.connectOptions(for: late))
            try await broker.subscribe(late, ["\(base)/#"])
            // mosquitto publishes the wills of its clients as it shuts down (before its last save).
            #expect(
                late.messages(under: base).map(Self.describe)
                    == (persistence ? ["kept=retained retained q1", "will=lost retained q1"] : [])
            )
        }
    }

    @Test(
        "a stopping broker publishes its clients' wills (queued for an offline persistent session); a killed one none",
        arguments: BrokerKind.allCases,
        [true, false]
    )
    func willsAtBrokerEnd(kind: BrokerKind, graceful: Bool) async throws {
        try await kind.run(ContractOptions(persistence: true)) { broker in
            let base = uniqueName("end")
            let subscriber = try broker.makeClient("sub")
            let options = broker.connectOptions(for: subscriber, cleanSession: false)
            try await broker.connect(subscriber, options)
            try await broker.subscribe(subscriber, ["\(base)/#"])
            await broker.disconnect(subscriber)
            try await broker.waitUntilBrokerEnded(subscriber.name, times: 1)
            let bystander = try broker.makeClient("bystander")
            let will = BrokerWill(topic: "\(base)/will", payload: Array("lost".utf8), qos: 1, retain: false)
            try await broker.connect(bystander, broker.connectOptions(for: bystander, will: will))
            if graceful {
                await broker.stop()
            } else {
                // Only what mosquitto saved survives a kill: save the offline session first.
                try await broker.saveStore()
                await broker.kill()
            }
            #expect(Self.isLost(try await broker.waitForTerminal(bystander)))
            try await broker.start()

            #expect(try await broker.connect(subscriber, options) == true)
            let publisher = try broker.makeClient("pub")
            try await broker.connect(publisher, broker.connectOptions(for: publisher))
            try await broker.sync(from: publisher, to: subscriber)
            #expect(subscriber.messages(under: base).map(Self.describe) == (graceful ? ["will=lost live q1"] : []))
        }
    }

    @Test(
        "a second connection with the same client id takes over: the first is disconnected and its will published",
        arguments: BrokerKind.allCases
    )
    func takeover(kind: BrokerKind) async throws {
        try await kind.run { broker in
            let base = uniqueName("takeover")
            let watcher = try broker.makeClient("watch")
            try await broker.connect(watcher, broker.connectOptions(for: watcher))
            try await broker.subscribe(watcher, ["\(base)/#"])
            let first = try broker.makeClient("same")
            let will = BrokerWill(topic: "\(base)/will", payload: Array("gone".utf8), qos: 1, retain: false)
            let options = broker.connectOptions(for: first, will: will)
            try await broker.connect(first, options)
            let second = try broker.makeClient("second")
            var secondOptions = broker.connectOptions(for: second)
            secondOptions.clientID = first.name
            try await broker.connect(second, secondOptions)
            let ended = try await broker.waitForTerminal(first)
            guard case .disconnected(let reason, false) = ended else {
                Issue.record("expected an unexpected .disconnected, got \(ended)")
                return
            }
            // mosquitto 2.0.11 closes the older connection; libmosquitto reports it lost.
            #expect(reason.hasSuffix("lost: The connection was lost"), "\(reason)")
            try await broker.waitUntil("the will") { watcher.messages(under: base).count >= 1 }
            try await broker.sync(from: second, to: watcher)
            #expect(watcher.messages(under: base).map(Self.describe) == ["will=gone live q1"])
            #expect(second.client.isConnected)
        }
    }

    @Test(
        "the client sends its unacknowledged QoS 1 messages again on its next connection",
        arguments: BrokerKind.allCases
    )
    func clientResendsAfterReconnect(kind: BrokerKind) async throws {
        try await kind.run { broker in
            let base = uniqueName("resend")
            let subscriber = try broker.makeClient("sub")
            try await broker.connect(subscriber, broker.connectOptions(for: subscriber))
            try await broker.subscribe(subscriber, ["\(base)/#"])
            let publisher = try broker.makeClient("pub")
            let options = broker.connectOptions(for: publisher)
            try await broker.connect(publisher, options)
            // The broker's PUBACKs never reach the publisher.
            broker.stall(publisher, towardsBroker: false, towardsClient: true)
            var ids: [Int32] = []
            for index in 0..<3 { ids.append(try publisher.publish("\(base)/m", "m\(index)", qos: 1)) }
            try await broker.waitUntil("3 at the subscriber") { subscriber.messages(under: base).count == 3 }
            #expect(publisher.acknowledgements.acknowledged.isEmpty)
            #expect(publisher.queuedMessageCount == 3)

            broker.cut(publisher)
            #expect(Self.isLost(try await broker.waitForTerminal(publisher)))
            #expect(publisher.queuedMessageCount == 3)
            broker.stall(publisher, towardsBroker: false, towardsClient: false)
            try await broker.connect(publisher, options)
            try await broker.waitUntil("the 3 acknowledged") { publisher.acknowledgements.acknowledged.count >= 3 }
            #expect(publisher.acknowledgements.acknowledged == ids)
            #expect(publisher.queuedMessageCount == 0)
            try await broker.sync(from: publisher, to: subscriber)
            #expect(subscriber.messages(under: base).texts == ["m0", "m1", "m2", "m0", "m1", "m2"])
        }
    }

    @Test(
        "wrong credentials are a CONNACK refusal marked as authorization; the right ones connect",
        arguments: BrokerKind.allCases,
        MQTTProtocolVersion.allCases
    )
    func credentials(kind: BrokerKind, version: MQTTProtocolVersion) async throws {
        try await kind.run(ContractOptions(users: ["agent": "correct horse"])) { broker in
            let client = try broker.makeClient("auth")
            for (username, password) in [("agent", "wrong"), (nil, nil)] as [(String?, String?)] {
                let before = client.terminalEvents.count
                try client.client.connect(
                    broker.connectOptions(
                        for: client,
                        protocolVersion: version,
                        username: username,
                        password: password
                    )
                )
                let terminal = try await broker.waitForTerminal(client, count: before + 1)
                guard case .connectFailed(let code, let reason, let isAuthorization) = terminal else {
                    Issue.record("expected .connectFailed, got \(terminal)")
                    return
                }
                #expect(isAuthorization, "\(reason)")
                #expect(reason.contains("refused by the broker"), "\(reason)")
                #expect(version == .v5 ? [0x86, 0x87].contains(code) : [4, 5].contains(code), "code \(code)")
            }
            try await broker.connect(
                client,
                broker.connectOptions(
                    for: client,
                    protocolVersion: version,
                    username: "agent",
                    password: "correct horse"
                )
            )
        }
    }

    // MARK: Helpers

    /// "a=2 retained q1": the last topic level, the payload, how it came and its QoS.
    static func describe(_ message: InboundMessage) -> String {
        let level = message.topic.split(separator: "/").last.map(String.init) ?? message.topic
        return
            "\(level)=\(String(decoding: message.payload, as: UTF8.self)) \(message.retain ? "retained" : "live") q\(message.qos)"
    }

    static func isLost(_ event: BrokerEvent) -> Bool {
        if case .disconnected(_, false) = event { return true }
        return false
    }

    static func isRequested(_ event: BrokerEvent) -> Bool {
        if case .disconnected(_, true) = event { return true }
        return false
    }
}
