import Foundation
import TestSupport
import Testing

/// What an MQTT 5 broker may tell the agent, end to end: mosquitto's `max_keepalive` (a Server Keep Alive in the
/// CONNACK) makes the agent ping at the broker's interval instead of its own. A Server Reference in a refusing
/// CONNACK is read by the real libmosquitto in BrokerIntegrationTests/ServerReferenceTransportTests; what the agent
/// does with it (follow a listed server, ignore any other) runs on virtual time in
/// AgentSimulationTests/ServerReferenceSimulationTests (issue 40).
@Suite(.timeLimit(.minutes(5)), .serialized) struct ServerHintsEndToEndTests {
    @Test func theBrokersServerKeepAliveSetsThePingInterval() async throws {
        // mosquitto 2.0: a v5 client asking for more than max_keepalive (10–65535) gets Server Keep Alive = it in
        // the CONNACK; log_type debug logs each PINGREQ.
        let broker = try await MosquittoBroker.started(
            options: .init(extraConfiguration: ["max_keepalive 10", "log_type debug"])
        )
        let device = "server-keepalive"
        let config = AgentProcess.config(device: device, port: broker.port)
            .replacingOccurrences(of: "  keepalive: 5\n", with: "  keepalive: 120\n")
        let agent = try AgentProcess(config: config)
        // With its own 120 s the agent would first ping after two minutes; at the broker's 10 s (mosquitto's
        // smallest max_keepalive), after about ten.
        let pinged = await Self.waitForPings(broker, client: "motion-agent-\(device)", count: 1, timeout: 40)
        #expect(pinged, "broker log: \(broker.log.suffix(3000))")
        print("server-keepalive: agent keepalive 120 s, mosquitto max_keepalive 10 s: a PINGREQ within 40 s")
        agent.runner.terminate()
        #expect(await agent.runner.waitForExit(timeout: 15) == 0)
        await broker.stop()
    }

    static func waitForPings(_ broker: MosquittoBroker, client: String, count: Int, timeout: Double) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            if broker.log.components(separatedBy: "Received PINGREQ from \(client)").count - 1 >= count { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
