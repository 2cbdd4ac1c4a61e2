import AgentPorts
import Foundation
import MosquittoTransport
import TestSupport
import Testing

@Suite("MosquittoClient under load, stalls and TLS", .timeLimit(.minutes(5)))
struct MosquittoClientLoadTests {
    private static func uniqueID(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8))"
    }

    private static func publish(_ client: MosquittoClient, _ topic: String, _ text: String, qos: Int) throws -> Int32 {
        try Array(text.utf8).withUnsafeBytes { try client.publish(topic: topic, payload: $0, qos: qos, retain: false) }
    }

    @Test("publish is safe from many tasks at once")
    func concurrentPublishers() async throws {
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["conc/#"])
        let client = MosquittoClient()
        let log = EventLog(client)
        try client.connect(broker.connectOptions(clientID: Self.uniqueID("conc")))
        try await log.waitForConnected()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for publisher in 0..<4 {
                group.addTask {
                    for index in 0..<250 {
                        _ = try Self.publish(client, "conc/\(publisher)", "\(index)", qos: 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        let messages = try await subscriber.waitFor(count: 1000)
        for publisher in 0..<4 {
            // One connection keeps each publisher's order.
            let payloads = messages.filter { $0.topic == "conc/\(publisher)" }.map {
                String(decoding: $0.payload, as: UTF8.self)
            }
            #expect(payloads == (0..<250).map(String.init))
        }
        try await log.waitForAcknowledgements("1000 acknowledgements", count: 1000)
        await client.disconnect(flushTimeout: 2)
        await subscriber.close()
    }

    @Test("a stalled broker: publish refuses past the queue limit, disconnect is bounded, the queue is resent")
    func stalledBroker() async throws {
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["stall/#"])
        let client = MosquittoClient(maxQueuedMessages: 50)
        let log = EventLog(client)
        let options = broker.connectOptions(clientID: Self.uniqueID("stall"), keepaliveSeconds: 60)
        try client.connect(options)
        try await log.waitForConnected()

        await broker.pause()
        var accepted = 0
        var refusal: BrokerError?
        for index in 0..<60 {
            do {
                _ = try Self.publish(client, "stall/data", "m\(index)", qos: 1)
                accepted += 1
            } catch let error as BrokerError {
                refusal = error
                break
            }
        }
        #expect(accepted == 50)
        #expect(refusal?.message.hasPrefix("the queue of messages waiting for the broker is full") == true)
        #expect(client.queuedMessageCount == 50)

        // Nothing is acknowledged while the broker is stopped: the flush gives up at its deadline and the
        // client still disconnects (the DISCONNECT fits in the socket buffer).
        await client.disconnect(flushTimeout: 0.3)
        let terminal = try await log.waitForTerminal()
        guard case .disconnected(_, true) = terminal else {
            Issue.record("expected an expected .disconnected, got \(terminal)")
            return
        }
        #expect(client.queuedMessageCount == 50)

        broker.resume()
        // Same options, same libmosquitto handle: the unacknowledged messages are sent again.
        try client.connect(options)
        try await log.waitFor("connected again", count: 2) {
            if case .connected = $0 { return true }
            return false
        }
        try await subscriber.waitUntil(timeout: 10, "all 50 distinct payloads") { messages in
            Set(messages.map(\.payload)).count == 50
        }
        let drainDeadline = ContinuousClock.now + .seconds(10)
        while client.queuedMessageCount > 0, ContinuousClock.now < drainDeadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(client.queuedMessageCount == 0)
        await client.disconnect(flushTimeout: 1)
        await subscriber.close()
    }

    @Test("TLS: a server certificate signed by the configured CA is accepted, another CA's is refused")
    func tls() async throws {
        let root = NSTemporaryDirectory() + "motion-agent-tls-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: root + "/good", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/other", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let files = try await TLSFiles.make(in: root + "/good")
        let otherCA = try await TLSFiles.make(in: root + "/other")

        let broker = try await MosquittoBroker.started(
            options: .init(extraConfiguration: [
                "cafile \(files.caFile)",
                "certfile \(files.serverCertificate)",
                "keyfile \(files.serverKey)",
                "tls_version tlsv1.2",
            ])
        )
        var options = broker.connectOptions(clientID: Self.uniqueID("tls"))
        options.tls = BrokerTLS(caFile: files.caFile)
        let subscriber = try await CapturingSubscriber(options: options, filters: ["tls/#"])

        var publisherOptions = options
        publisherOptions.clientID = Self.uniqueID("tls-pub")
        let client = MosquittoClient()
        let log = EventLog(client)
        try client.connect(publisherOptions)
        try await log.waitForConnected()
        _ = try Self.publish(client, "tls/secret", "encrypted", qos: 1)
        let messages = try await subscriber.waitFor(count: 1)
        #expect(messages[0].payload == Array("encrypted".utf8))
        await client.disconnect(flushTimeout: 1)
        await subscriber.close()

        var wrongCA = options
        wrongCA.clientID = Self.uniqueID("tls-bad")
        wrongCA.tls = BrokerTLS(caFile: otherCA.caFile)
        let refused = MosquittoClient()
        let refusedLog = EventLog(refused)
        try refused.connect(wrongCA)
        let terminal = try await refusedLog.waitForTerminal()
        guard case .connectFailed(_, let reason, let isAuthorization) = terminal else {
            Issue.record("expected .connectFailed, got \(terminal)")
            return
        }
        #expect(!isAuthorization)
        #expect(reason.hasPrefix("connect to 127.0.0.1:\(broker.port)"))
        #expect(reason.contains("mqtt.tls"))
    }
}
