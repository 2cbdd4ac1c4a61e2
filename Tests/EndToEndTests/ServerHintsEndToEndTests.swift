import AgentPorts
import Foundation
import TestSupport
import Testing

/// What an MQTT 5 broker may tell the agent about servers and keep-alive, end to end: a Server Reference in a
/// refusing CONNACK sends the agent to the named server (`RedirectingBroker`, since no broker installable here
/// sends one, in front of a real mosquitto), and mosquitto's `max_keepalive` (a Server Keep Alive in the
/// CONNACK) makes the agent ping at the broker's interval instead of its own.
@Suite(.serialized) struct ServerHintsEndToEndTests {
    @Test func aRefusalNamingAnotherServerSendsTheAgentThereCountedAsAFailover() async throws {
        let broker = try await MosquittoBroker.started()
        let redirecting = try RedirectingBroker(reference: "127.0.0.1:\(broker.port)")
        defer { redirecting.stop() }
        let device = "server-reference"
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/\(device)/status"])
        let config = FailoverEndToEndTests.config(
            device: device,
            servers: ["127.0.0.1:\(redirecting.port)"],
            protocol: "v5"
        )
        let agent = try AgentProcess(config: config)
        try await subscriber.waitUntil(timeout: 20, "the birth on the named server") { messages in
            messages.contains { payloadJSON($0)["state"] as? String == "online" }
        }
        let birth = try #require(
            subscriber.messages(on: "motion/\(device)/status").map(payloadJSON).first {
                $0["state"] as? String == "online"
            }
        )
        let link = try #require(birth["broker"] as? [String: Any], "no broker object in the birth")
        #expect(link["server"] as? String == "127.0.0.1:\(broker.port)")
        #expect(link["failovers"] as? Int == 1)
        let log = agent.runner.standardError
        #expect(
            log.contains(
                "failing over to 127.0.0.1:\(broker.port), the server the broker named (MQTT 5 Server Reference; failover 1)"
            ),
            "agent log: \(log.suffix(3000))"
        )
        #expect(log.contains("use another server"))
        #expect(redirecting.redirected == 1)
        print(
            "server-reference: refused by 127.0.0.1:\(redirecting.port) with 0x9C naming 127.0.0.1:\(broker.port); birth there, failovers 1"
        )
        agent.runner.terminate()
        #expect(await agent.runner.waitForExit(timeout: 15) == 0)
        await subscriber.close()
        await broker.stop()
    }

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
