import AgentPorts
import Foundation
import TestSupport
import Testing

/// What an MQTT 5 broker may tell the agent about servers and keep-alive, end to end: a Server Reference in a
/// refusing CONNACK sends the agent to the named server when config.yaml names it, and is ignored otherwise — a
/// server named by whoever answers on the network never gets the device's credentials (`RedirectingBroker`, since
/// no broker installable here sends one, in front of real mosquittos); and mosquitto's `max_keepalive` (a Server
/// Keep Alive in the CONNACK) makes the agent ping at the broker's interval instead of its own.
@Suite(.timeLimit(.minutes(5)), .serialized) struct ServerHintsEndToEndTests {
    @Test func aRefusalNamingAnotherListedServerSendsTheAgentThereCountedAsAFailover() async throws {
        // Listening once fixes the broker's port; stopped, the agent cannot start there and has to meet the
        // redirecting broker whichever of the two it tries first.
        let broker = try await MosquittoBroker.started()
        await broker.stop()
        let redirecting = try RedirectingBroker(reference: "127.0.0.1:\(broker.port)")
        defer { redirecting.stop() }
        let device = "server-reference"
        let config = FailoverEndToEndTests.config(
            device: device,
            servers: ["127.0.0.1:\(redirecting.port)", "127.0.0.1:\(broker.port)"],
            protocol: "v5"
        )
        let agent = try AgentProcess(config: config)
        let followed =
            "failing over to 127.0.0.1:\(broker.port), the server the broker named (MQTT 5 Server Reference; failover "
        try await Self.until("the agent follows the reference", timeout: 30) {
            agent.runner.standardError.contains(followed)
        }
        try await broker.start()
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/\(device)/status"])
        try await subscriber.waitUntil(timeout: 30, "the birth on the named server") { messages in
            messages.contains { payloadJSON($0)["state"] as? String == "online" }
        }
        let birth = try #require(
            subscriber.messages(on: "motion/\(device)/status").map(payloadJSON).last {
                $0["state"] as? String == "online"
            }
        )
        let link = try #require(birth["broker"] as? [String: Any], "no broker object in the birth")
        #expect(link["server"] as? String == "127.0.0.1:\(broker.port)")
        #expect((link["failovers"] as? Int ?? 0) >= 1)
        let log = agent.runner.standardError
        #expect(log.contains("use another server"))
        #expect(!log.contains("which is not in mqtt.servers"), "agent log: \(log.suffix(3000))")
        #expect(redirecting.redirected >= 1)
        print(
            "server-reference: refused by 127.0.0.1:\(redirecting.port) with 0x9C naming 127.0.0.1:\(broker.port) (listed); followed, birth there"
        )
        agent.runner.terminate()
        #expect(await agent.runner.waitForExit(timeout: 15) == 0)
        await subscriber.close()
        await broker.stop()
    }

    @Test func aRefusalNamingAServerConfigYamlDoesNotNameIsIgnoredAndThatServerNeverSeesTheCredentials() async throws {
        // The server the reference names is a real broker that logs every connection, with the device's account:
        // were the agent to follow it, it would log in there.
        let trap = try await MosquittoBroker.started(
            options: .init(allowAnonymous: false, users: ["server-reference-2": "secret"])
        )
        let redirecting = try RedirectingBroker(reference: "127.0.0.1:\(trap.port)", reasonCode: 0x9D)
        defer { redirecting.stop() }
        let device = "server-reference-2"
        let directory = NSTemporaryDirectory() + "motion-reference-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "secret\n".write(toFile: directory + "/password", atomically: true, encoding: .utf8)
        chmod(directory + "/password", 0o600)
        let config = FailoverEndToEndTests.config(
            device: device,
            servers: ["127.0.0.1:\(redirecting.port)"],
            protocol: "v5"
        ).replacingOccurrences(
            of: "  reconnect_max_delay: 1\n",
            with: "  reconnect_max_delay: 1\n  username: \(device)\n  password_file: \(directory)/password\n"
        )
        let agent = try AgentProcess(config: config)
        let ignored =
            "the broker referred the agent to \"127.0.0.1:\(trap.port)\" (MQTT 5 Server Reference), which is not in mqtt.servers (or mqtt.host) — ignored"
        // Three refusals: each time the agent comes back to its own server, never to the named one.
        try await Self.until("three refusals, each reference ignored", timeout: 40) {
            redirecting.redirected >= 3 && agent.runner.standardError.components(separatedBy: ignored).count > 3
        }
        let log = agent.runner.standardError
        #expect(!log.contains("the server the broker named"), "agent log: \(log.suffix(3000))")
        #expect(!trap.log.contains("motion-agent-\(device)"), "broker log: \(trap.log.suffix(2000))")
        #expect(!trap.log.contains("New client connected"), "broker log: \(trap.log.suffix(2000))")
        print(
            "server-reference: refused by 127.0.0.1:\(redirecting.port) with 0x9D naming 127.0.0.1:\(trap.port) (not listed) \(redirecting.redirected) times; ignored each time, no connection there"
        )
        agent.runner.terminate()
        #expect(await agent.runner.waitForExit(timeout: 15) == 0)
        await trap.stop()
    }

    struct Timeout: Error, CustomStringConvertible { var description: String }

    static func until(_ what: String, timeout: Double, _ condition: @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        guard condition() else { throw Timeout(description: "gave up waiting \(timeout) s for \(what)") }
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
