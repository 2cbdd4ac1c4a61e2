import AgentPorts
import Foundation
import MosquittoTransport
import TestSupport
import Testing

/// Against a real mosquitto started per test on a free loopback port.
@Suite("MosquittoClient against a real broker", .timeLimit(.minutes(5)))
struct MosquittoClientTests {
    private static func uniqueID(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8))"
    }

    private static func publish(
        _ client: MosquittoClient,
        _ topic: String,
        _ text: String,
        qos: Int,
        retain: Bool = false
    ) throws -> Int32 {
        try Array(text.utf8).withUnsafeBytes { try client.publish(topic: topic, payload: $0, qos: qos, retain: retain) }
    }

    @Test("publish and subscribe round trip", arguments: MQTTProtocolVersion.allCases)
    func roundTrip(version: MQTTProtocolVersion) async throws {
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(
            broker: broker,
            filters: ["rt/#"],
            qos: 2,
            protocolVersion: version
        )
        let client = MosquittoClient()
        let log = EventLog(client)
        try client.connect(broker.connectOptions(clientID: Self.uniqueID("rt"), protocolVersion: version))
        #expect(try await log.waitForConnected() == false)
        #expect(client.isConnected)

        _ = try Self.publish(client, "rt/zero", "q0", qos: 0)
        _ = try Self.publish(client, "rt/one", "q1", qos: 1)
        _ = try Self.publish(client, "rt/two", "q2", qos: 2)
        let messages = try await subscriber.waitFor(count: 3)
        let byTopic = Dictionary(uniqueKeysWithValues: messages.map { ($0.topic, $0) })
        #expect(byTopic["rt/zero"]?.payload == Array("q0".utf8))
        #expect(byTopic["rt/zero"]?.qos == 0)
        #expect(byTopic["rt/one"]?.payload == Array("q1".utf8))
        #expect(byTopic["rt/one"]?.qos == 1)
        #expect(byTopic["rt/two"]?.payload == Array("q2".utf8))
        #expect(byTopic["rt/two"]?.qos == 2)
        #expect(messages.allSatisfy { !$0.retain && $0.responseTopic == nil && $0.correlationData == nil })

        // The client receives on its own subscription too.
        try client.subscribe(["echo/a", "echo/b"], qos: 1)
        let echo = try await CapturingSubscriber(broker: broker, filters: ["echo/#"], protocolVersion: version)
        _ = try Self.publish(client, "echo/b", "back", qos: 1)
        try await echo.waitFor(count: 1)
        try await log.waitFor("echo/b on the publishing client") {
            if case .message(let message) = $0 {
                return message.topic == "echo/b" && message.payload == Array("back".utf8)
            }
            return false
        }

        await client.disconnect(flushTimeout: 2)
        #expect(!client.isConnected)
        let terminal = try await log.waitForTerminal()
        #expect(
            terminal == .disconnected(reason: "disconnected from 127.0.0.1:\(broker.port) as requested", expected: true)
        )
        await subscriber.close()
        await echo.close()
    }

    @Test("messages that can never be sent are marked permanent; not being connected is not")
    func permanentPublishErrors() async throws {
        let broker = try await MosquittoBroker.started()
        let client = MosquittoClient()
        let payload: [UInt8] = [1, 2, 3]
        func publishError(_ topic: String, qos: Int) -> BrokerError? {
            payload.withUnsafeBytes { bytes in
                do throws(BrokerError) {
                    _ = try client.publish(topic: topic, payload: bytes, qos: qos, retain: false)
                    return nil
                } catch {
                    return error
                }
            }
        }
        #expect(publishError("perm/a", qos: 0)?.isPermanent == false, "disconnected: worth retrying later")
        let log = EventLog(client)
        try client.connect(broker.connectOptions(clientID: Self.uniqueID("perm")))
        try await log.waitForConnected()
        #expect(publishError("perm/+/wildcard", qos: 0)?.isPermanent == true)
        #expect(publishError("perm/a", qos: 3)?.isPermanent == true)
        #expect(publishError("perm/a", qos: 1) == nil)
        await client.disconnect(flushTimeout: 1)
    }

    @Test("QoS 1 publishes are acknowledged to the handler with the ids publish returned")
    func qos1Delivered() async throws {
        let broker = try await MosquittoBroker.started()
        let client = MosquittoClient()
        let log = EventLog(client)
        try client.connect(broker.connectOptions(clientID: Self.uniqueID("qos1")))
        try await log.waitForConnected()

        var ids: Set<Int32> = []
        for index in 0..<200 {
            ids.insert(try Self.publish(client, "qos1/data", "m\(index)", qos: 1))
        }
        #expect(ids.count == 200)
        let expected = ids
        try await log.waitForAcknowledgements("200 acknowledgements", count: 200) { expected.contains($0) }
        let delivered = Set(log.acknowledgements.acknowledged)
        #expect(delivered == ids)
        #expect(log.acknowledgements.acknowledged.count == 200, "each id acknowledged once")
        #expect(client.queuedMessageCount == 0)
        await client.disconnect(flushTimeout: 1)
    }

    @Test("disconnect flushes queued QoS 1 messages before DISCONNECT")
    func disconnectFlushes() async throws {
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["flush/#"])
        let client = MosquittoClient()
        let log = EventLog(client)
        try client.connect(broker.connectOptions(clientID: Self.uniqueID("flush")))
        try await log.waitForConnected()
        for index in 0..<500 {
            _ = try Self.publish(client, "flush/data", "m\(index)", qos: 1)
        }
        await client.disconnect(flushTimeout: 10)
        #expect(client.queuedMessageCount == 0)
        let messages = try await subscriber.waitFor(count: 500)
        #expect(messages.map { String(decoding: $0.payload, as: UTF8.self) } == (0..<500).map { "m\($0)" })
        let terminal = try await log.waitForTerminal()
        guard case .disconnected(_, let expected) = terminal else {
            Issue.record("expected .disconnected, got \(terminal)")
            return
        }
        #expect(expected)
        await subscriber.close()
    }

    @Test("a disconnect while messages keep arriving reaches the broker as DISCONNECT, so no will is published")
    func disconnectDuringInboundTraffic() async throws {
        // libmosquitto marks itself disconnected when DISCONNECT is queued, and from then on reads any packet
        // as a protocol error that closes the socket with DISCONNECT still unwritten: the broker saw a lost
        // connection and published the will over the agent's "shutdown" goodbye (found in CI). A flood of
        // inbound messages makes a packet arrive in that window nearly every time.
        let broker = try await MosquittoBroker.started()
        let flooder = MosquittoClient()
        let flooderLog = EventLog(flooder, keepsMessages: false)
        try flooder.connect(broker.connectOptions(clientID: Self.uniqueID("flooder")))
        try await flooderLog.waitForConnected()
        let payload = [UInt8](repeating: 0x2A, count: 1024)
        let flooding = Task {
            while !Task.isCancelled {
                for _ in 0..<100 {
                    _ = try? payload.withUnsafeBytes {
                        try flooder.publish(topic: "busy/x", payload: $0, qos: 0, retain: false)
                    }
                }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        defer { flooding.cancel() }

        for round in 0..<8 {
            let clientID = Self.uniqueID("busy\(round)")
            let client = MosquittoClient()
            let log = EventLog(client, keepsMessages: false)
            try client.connect(
                broker.connectOptions(
                    clientID: clientID,
                    will: BrokerWill(topic: "bye/\(clientID)", payload: Array("lost".utf8), qos: 0, retain: false)
                )
            )
            try await log.waitForConnected()
            try client.subscribe(["busy/#"], qos: 0)
            while log.messageCount < 200 { try await Task.sleep(for: .milliseconds(5)) }
            await client.disconnect(flushTimeout: 1)
            let terminal = try await log.waitForTerminal()
            guard case .disconnected(_, true) = terminal else {
                Issue.record("round \(round): expected an expected .disconnected, got \(terminal)")
                continue
            }
            // mosquitto logs "disconnected." for a DISCONNECT, "closed its connection." for an EOF or reset.
            let deadline = ContinuousClock.now + .seconds(10)
            var line: String?
            while line == nil, ContinuousClock.now < deadline {
                line = broker.log.split(separator: "\n").last { $0.contains("Client \(clientID) ") }.map(String.init)
                if line?.contains("New client") == true { line = nil }
                if line == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(line?.hasSuffix("Client \(clientID) disconnected.") == true, "round \(round): \(line ?? "no line")")
        }
        flooding.cancel()
        await flooder.disconnect(flushTimeout: 1)
    }

    @Test("the will is published when the connection dies without DISCONNECT")
    func willOnUncleanDrop() async throws {
        // A relay between client and broker stands in for the network: cutting it closes both TCP
        // connections with no MQTT packet, exactly what a dead link or a killed process looks like to the
        // broker, which then publishes the will. No timing is involved (no keepalive expiry to wait for).
        let broker = try await MosquittoBroker.started()
        let watcher = try await CapturingSubscriber(broker: broker, filters: ["agent/+/status"])
        let relay = try LoopbackProxy(targetPort: broker.port)
        let client = MosquittoClient()
        let log = EventLog(client)
        var options = broker.connectOptions(
            clientID: Self.uniqueID("will"),
            will: BrokerWill(topic: "agent/a1/status", payload: Array("offline".utf8), qos: 1, retain: true)
        )
        options.port = relay.port
        try client.connect(options)
        try await log.waitForConnected()
        _ = try Self.publish(client, "agent/a1/status", "online", qos: 1, retain: true)
        try await watcher.waitFor(count: 1)

        relay.cut()
        let messages = try await watcher.waitFor(count: 2)
        #expect(messages.map { String(decoding: $0.payload, as: UTF8.self) } == ["online", "offline"])
        let terminal = try await log.waitForTerminal()
        guard case .disconnected(let reason, let expected) = terminal else {
            Issue.record("expected .disconnected, got \(terminal)")
            return
        }
        #expect(!expected)
        #expect(reason.hasPrefix("connection to 127.0.0.1:\(relay.port) lost"))
        #expect(!client.isConnected)

        // The will was retained: a late subscriber sees the agent as offline.
        let late = try await CapturingSubscriber(broker: broker, filters: ["agent/a1/status"])
        let retained = try await late.waitFor(count: 1)
        #expect(retained.first?.payload == Array("offline".utf8))
        #expect(retained.first?.retain == true)
        await watcher.close()
        await late.close()
    }

    @Test("connecting to a closed port reports connectFailed with a sentence")
    func closedPort() async throws {
        let port = FreePort.find()
        let client = MosquittoClient()
        let log = EventLog(client)
        try client.connect(BrokerConnectOptions(host: "127.0.0.1", port: port, clientID: "nobody"))
        let terminal = try await log.waitForTerminal()
        #expect(
            terminal
                == .connectFailed(
                    code: 14,
                    reason:
                        "connect to 127.0.0.1:\(port) failed: Connection refused — check mqtt.host and mqtt.port in config.yaml, or that the broker is running",
                    isAuthorization: false
                )
        )
        #expect(!client.isConnected)
        // The failed attempt is over: a new one may start at once.
        try client.connect(BrokerConnectOptions(host: "127.0.0.1", port: port, clientID: "nobody"))
        try await log.waitFor("second connectFailed", count: 2) {
            if case .connectFailed = $0 { return true }
            return false
        }
    }

    @Test("a wrong password is an authorization failure", arguments: MQTTProtocolVersion.allCases)
    func wrongPassword(version: MQTTProtocolVersion) async throws {
        let broker = try await MosquittoBroker.started(
            options: .init(allowAnonymous: false, users: ["agent": "correct horse"])
        )
        let client = MosquittoClient()
        let log = EventLog(client)
        try client.connect(
            broker.connectOptions(
                clientID: Self.uniqueID("pw"),
                protocolVersion: version,
                username: "agent",
                password: "wrong"
            )
        )
        let terminal = try await log.waitForTerminal()
        guard case .connectFailed(let code, let reason, let isAuthorization) = terminal else {
            Issue.record("expected .connectFailed, got \(terminal)")
            return
        }
        #expect(isAuthorization)
        #expect(reason.hasPrefix("connect to 127.0.0.1:\(broker.port) refused by the broker: "))
        #expect(reason.contains("mqtt.username and mqtt.password_file"))
        #expect(version == .v5 ? [0x86, 0x87].contains(code) : [4, 5].contains(code))

        // The right password is accepted.
        let good = MosquittoClient()
        let goodLog = EventLog(good)
        try good.connect(
            broker.connectOptions(
                clientID: Self.uniqueID("pw"),
                protocolVersion: version,
                username: "agent",
                password: "correct horse"
            )
        )
        try await goodLog.waitForConnected()
        await good.disconnect(flushTimeout: 1)
    }

    @Test("a killed broker gives disconnected; connecting again after its restart succeeds")
    func brokerKilledAndRestarted() async throws {
        let broker = try await MosquittoBroker.started()
        let client = MosquittoClient()
        let log = EventLog(client)
        let options = broker.connectOptions(clientID: Self.uniqueID("restart"), keepaliveSeconds: 5)
        try client.connect(options)
        try await log.waitForConnected()

        await broker.kill()
        let terminal = try await log.waitForTerminal()
        guard case .disconnected(let reason, let expected) = terminal else {
            Issue.record("expected .disconnected, got \(terminal)")
            return
        }
        #expect(!expected)
        #expect(reason.hasPrefix("connection to 127.0.0.1:\(broker.port) lost"))
        #expect(!client.isConnected)
        #expect(throws: BrokerError.self) { _ = try Self.publish(client, "x", "y", qos: 0) }

        // Broker still down: the attempt fails with the sentence, and the agent would back off.
        try client.connect(options)
        try await log.waitFor("connectFailed while the broker is down") {
            if case .connectFailed(_, let reason, false) = $0 { return reason.contains("Connection refused") }
            return false
        }

        try await broker.start()
        try client.connect(options)
        try await log.waitFor("connected again", count: 2) {
            if case .connected = $0 { return true }
            return false
        }
        #expect(client.isConnected)
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["again"])
        _ = try Self.publish(client, "again", "up", qos: 1)
        try await subscriber.waitFor(count: 1)
        await client.disconnect(flushTimeout: 1)
        await subscriber.close()
    }

    @Test("MQTT 5 request/response carries response topic and correlation data")
    func requestResponse() async throws {
        let broker = try await MosquittoBroker.started()
        let responder = MosquittoClient()
        let log = EventLog(responder)
        try responder.connect(broker.connectOptions(clientID: Self.uniqueID("responder")))
        try await log.waitForConnected()
        try responder.subscribe(["req/#"], qos: 1)
        let requester = try await CapturingSubscriber(broker: broker, filters: ["resp/#"])

        // The request comes from mosquitto_pub, an independent MQTT 5 implementation of the properties.
        // It is repeated until the responder's subscription is in place (SUBACK is not an event).
        var request: InboundMessage?
        for _ in 0..<50 where request == nil {
            let publisher = ProcessRunner(
                executable: "/usr/bin/mosquitto_pub",
                arguments: [
                    "-h", "127.0.0.1", "-p", "\(broker.port)", "-V", "5", "-q", "1",
                    "-t", "req/status", "-m", "status?",
                    "-D", "publish", "response-topic", "resp/client-7",
                    "-D", "publish", "correlation-data", "corr-42",
                ]
            )
            try publisher.start()
            #expect(await publisher.waitForExit(timeout: 10) == 0, "mosquitto_pub: \(publisher.standardError)")
            request = try? await log.waitFor("the request", timeout: 0.2) {
                if case .message(let message) = $0 { return message.topic == "req/status" }
                return false
            }.inboundMessage
        }
        let received = try #require(request)
        #expect(received.payload == Array("status?".utf8))
        #expect(received.responseTopic == "resp/client-7")
        #expect(received.correlationData == Array("corr-42".utf8))

        try responder.publishResponse(
            topic: try #require(received.responseTopic),
            payload: Array("ok".utf8),
            correlationData: received.correlationData
        )
        let responses = try await requester.waitFor(count: 1)
        #expect(responses[0].topic == "resp/client-7")
        #expect(responses[0].payload == Array("ok".utf8))
        #expect(responses[0].correlationData == Array("corr-42".utf8))
        await responder.disconnect(flushTimeout: 1)
        await requester.close()
    }

    @Test("a persistent MQTT 5 session keeps subscriptions and queued messages across connections")
    func persistentSession() async throws {
        let broker = try await MosquittoBroker.started()
        let clientID = Self.uniqueID("persist")
        let options = broker.connectOptions(clientID: clientID, cleanSession: false)
        let client = MosquittoClient()
        let log = EventLog(client)
        try client.connect(options)
        #expect(try await log.waitForConnected() == false)
        try client.subscribe(["persist/#"], qos: 1)
        // Proves the subscription is active before going offline: the client receives its own message.
        _ = try Self.publish(client, "persist/probe", "probe", qos: 1)
        try await log.waitFor("own probe") {
            if case .message(let message) = $0 { return message.topic == "persist/probe" }
            return false
        }
        await client.disconnect(flushTimeout: 1)

        let other = MosquittoClient()
        let otherLog = EventLog(other)
        try other.connect(broker.connectOptions(clientID: Self.uniqueID("other")))
        try await otherLog.waitForConnected()
        _ = try Self.publish(other, "persist/while-away", "queued", qos: 1)
        await other.disconnect(flushTimeout: 2)

        try client.connect(options)
        let reconnected = try await log.waitFor("second connected", count: 2) {
            if case .connected = $0 { return true }
            return false
        }
        _ = reconnected
        #expect(log.all.filter { $0 == .connected(sessionPresent: true) }.count == 1)
        try await log.waitFor("the message queued while away") {
            if case .message(let message) = $0 { return message.topic == "persist/while-away" }
            return false
        }
        await client.disconnect(flushTimeout: 1)
    }

    @Test("inbound messages beyond the backlog limit are dropped and counted; connection events are not")
    func boundedBacklog() async throws {
        let broker = try await MosquittoBroker.started()
        let client = MosquittoClient(eventBacklogLimit: 10)
        try client.connect(broker.connectOptions(clientID: Self.uniqueID("slow")))
        // Nobody consumes `events` yet: the first `.connected` must wait in the stream regardless.
        while !client.isConnected { try await Task.sleep(for: .milliseconds(10)) }
        try client.subscribe(["flood/#"], qos: 0)
        let publisher = MosquittoClient()
        let publisherLog = EventLog(publisher)
        try publisher.connect(broker.connectOptions(clientID: Self.uniqueID("flood")))
        try await publisherLog.waitForConnected()
        // Repeat until the subscription is active and 100 messages have either waited or been dropped.
        var sent = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while client.droppedInboundCount < 90, ContinuousClock.now < deadline {
            _ = try Self.publish(publisher, "flood/x", "m\(sent)", qos: 1)
            sent += 1
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(client.droppedInboundCount >= 90)
        await client.disconnect(flushTimeout: 1)

        var iterator = client.events.makeAsyncIterator()
        var received: [BrokerEvent] = []
        while let event = await iterator.next() {
            received.append(event)
            if case .disconnected = event { break }
        }
        #expect(received.first == .connected(sessionPresent: false))
        #expect(received.filter(\.isMessage).count == 10)
        #expect(received.last.map { if case .disconnected(_, true) = $0 { true } else { false } } == true)
        await publisher.disconnect(flushTimeout: 1)
    }

    @Test("acknowledgements reach the handler while inbound messages flood a stalled event stream")
    func acknowledgementsBypassTheEventBound() async throws {
        let broker = try await MosquittoBroker.started()
        // Nobody consumes `events`, and it holds 10 messages: the flood below passes that bound at once.
        let client = MosquittoClient(eventBacklogLimit: 10)
        let acknowledgements = AcknowledgementRecorder()
        client.setAcknowledgementHandler(acknowledgements)
        try client.connect(broker.connectOptions(clientID: Self.uniqueID("acks")))
        while !client.isConnected { try await Task.sleep(for: .milliseconds(10)) }
        try client.subscribe(["flood/#"], qos: 0)
        let flooder = MosquittoClient()
        let flooderLog = EventLog(flooder)
        try flooder.connect(broker.connectOptions(clientID: Self.uniqueID("flooder")))
        try await flooderLog.waitForConnected()

        // Interleaved: 250 flood messages to the client, then 100 QoS 1 publishes from it, twenty times.
        var ids: Set<Int32> = []
        for round in 0..<20 {
            var flooded = 0
            while flooded < 250 {
                if (try? Self.publish(flooder, "flood/x", "f\(round)-\(flooded)", qos: 0)) != nil {
                    flooded += 1
                } else {
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            var published = 0
            while published < 100 {
                if let id = try? Self.publish(client, "acks/x", "m\(round)-\(published)", qos: 1) {
                    ids.insert(id)
                    published += 1
                } else {
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            // Publishing never suspends: give the other tests' tasks the shared threads between rounds.
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(ids.count == 2000)
        let expected = ids
        let deadline = ContinuousClock.now + .seconds(30)
        while !Set(acknowledgements.acknowledged).isSuperset(of: expected) || client.droppedInboundCount < 1000,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(client.droppedInboundCount >= 1000, "the inbound bound was passed")
        #expect(Set(acknowledgements.acknowledged).isSuperset(of: expected), "every QoS 1 publish acknowledged")
        #expect(client.queuedMessageCount == 0)
        await flooder.disconnect(flushTimeout: 1)
        await client.disconnect(flushTimeout: 1)
    }

    @Test("keepalive below 5 s is rejected before any network activity")
    func keepaliveTooShort() throws {
        let client = MosquittoClient()
        let options = BrokerConnectOptions(host: "127.0.0.1", port: 1883, clientID: "k", keepaliveSeconds: 4)
        let error = #expect(throws: BrokerError.self) { try client.connect(options) }
        #expect(error?.operation == "connect")
        #expect(
            error?.message
                == "keepalive 4 s is below libmosquitto's minimum of 5 s — set mqtt.keepalive in config.yaml to 5…65535"
        )
        #expect(!client.isConnected)
    }

    @Test("publish and subscribe refuse while not connected")
    func refusesWhileDisconnected() throws {
        let client = MosquittoClient()
        let error = #expect(throws: BrokerError.self) { _ = try Self.publish(client, "t", "x", qos: 1) }
        #expect(error?.message == "not connected to the broker — wait for the .connected event")
        #expect(throws: BrokerError.self) { try client.subscribe(["t"], qos: 1) }
        #expect(throws: BrokerError.self) { try client.publishResponse(topic: "t", payload: [1], correlationData: nil) }
    }

    @Test("invalid options are refused with the config key to fix")
    func invalidOptions() throws {
        let client = MosquittoClient()
        var persistentWithoutID = BrokerConnectOptions(host: "127.0.0.1", port: 1883, clientID: "")
        persistentWithoutID.cleanSession = false
        let error = #expect(throws: BrokerError.self) { try client.connect(persistentWithoutID) }
        #expect(error?.message.contains("mqtt.client_id") == true)

        var unboundedWindow = BrokerConnectOptions(host: "127.0.0.1", port: 1883, clientID: "w")
        unboundedWindow.maxInflightMessages = 0
        #expect(throws: BrokerError.self) { try client.connect(unboundedWindow) }

        var halfCertificate = BrokerConnectOptions(host: "127.0.0.1", port: 1883, clientID: "c")
        halfCertificate.tls = BrokerTLS(caFile: nil, certFile: "/tmp/client.crt", keyFile: nil)
        let tlsError = #expect(throws: BrokerError.self) { try client.connect(halfCertificate) }
        #expect(tlsError?.message.contains("mqtt.tls.cert_file and mqtt.tls.key_file") == true)
    }
}

extension BrokerEvent {
    var inboundMessage: InboundMessage? {
        if case .message(let message) = self { return message }
        return nil
    }

    var isMessage: Bool { inboundMessage != nil }
}
