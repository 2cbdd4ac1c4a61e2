import AgentPorts
import Foundation
import MosquittoTransport
import TestSupport
import Testing

/// The fixtures other suites (end to end) rely on, checked against independent clients.
@Suite("Broker fixture", .timeLimit(.minutes(5)))
struct BrokerFixtureTests {
    @Test("a SIGKILLed client process gets its will published (mosquitto_sub --will-*)")
    func killedProcessWill() async throws {
        let broker = try await MosquittoBroker.started()
        let watcher = try await CapturingSubscriber(broker: broker, filters: ["fixture/+/status"])
        let process = ProcessRunner(
            executable: "/usr/bin/mosquitto_sub",
            arguments: [
                "-h", broker.host, "-p", "\(broker.port)", "-V", "5", "-i", "fixture-sub", "-t", "fixture/unused",
                "--will-topic", "fixture/sub/status", "--will-payload", "offline", "--will-qos", "1",
            ]
        )
        try process.start()
        // mosquitto_sub's own output is block-buffered into a pipe; the broker's log line is not.
        #expect(await broker.waitForLog(containing: "as fixture-sub"), "broker log: \(broker.log)")
        process.kill()
        #expect(await process.waitForExit(timeout: 10) == SIGKILL)
        #expect(process.terminatedBySignal)
        let messages = try await watcher.waitFor(count: 1)
        #expect(messages[0].topic == "fixture/sub/status")
        #expect(messages[0].payload == Array("offline".utf8))
        await watcher.close()
    }

    @Test("with persistence, a retained message survives a restart on the same port")
    func persistenceAcrossRestart() async throws {
        let broker = try await MosquittoBroker.started(options: .init(persistence: true))
        let port = broker.port
        let client = MosquittoClient()
        let log = EventLog(client)
        try client.connect(broker.connectOptions(clientID: "fixture-retain"))
        try await log.waitForConnected()
        _ = try Array("kept".utf8).withUnsafeBytes {
            try client.publish(topic: "fixture/retained", payload: $0, qos: 1, retain: true)
        }
        await client.disconnect(flushTimeout: 2)

        try await broker.restart()
        #expect(broker.port == port)
        #expect(broker.isRunning)
        let late = try await CapturingSubscriber(broker: broker, filters: ["fixture/retained"])
        let messages = try await late.waitFor(count: 1)
        #expect(messages[0].payload == Array("kept".utf8))
        #expect(messages[0].retain)
        #expect(broker.log.contains("mosquitto version"))
        await late.close()
    }
}
