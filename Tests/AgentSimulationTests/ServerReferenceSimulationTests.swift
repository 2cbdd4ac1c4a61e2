import AgentConfig
import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// What an MQTT 5 broker may tell the agent about servers, on virtual time (moved from ServerHintsEndToEndTests,
/// issue 40): a Server Reference in a refusing CONNACK sends the agent to the named server when config.yaml names
/// it, and is ignored otherwise — a server named by whoever answers on the network never gets the device's
/// credentials. The referring broker is `SimulatedConnectTap`'s referring endpoint (no installable broker sends a
/// Server Reference; the end-to-end test used a TCP fake for the same reason).
@Suite struct ServerReferenceSimulationTests {
    typealias Scenario = DeliveryScenario

    @Test func aRefusalNamingAnotherListedServerSendsTheAgentThereCountedAsAFailover() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker")
        // Stopped, the agent cannot start there and has to meet the referring server whichever of the two it tries
        // first.
        broker.stop()
        let log = SimulationLogRecorder()
        var fleet = SimulatedFleetConfiguration()
        fleet.brokers = ["referrer", "broker"]
        fleet.reconnectMaxDelay = 1
        let device = world.addDevice(
            "server-reference",
            configuration: try fleet.configuration(deviceID: "server-reference"),
            seed: 41,
            logger: log.logger()
        )
        let tap = world.start(device) {
            SimulatedConnectTap(
                wrapping: $0,
                referrals: ["referrer:1883": .init(reference: "broker:1883", reasonCode: 0x9C)],
                executor: world.executor
            )
        }
        let followed =
            "failing over to broker:1883, the server the broker named (MQTT 5 Server Reference; failover "
        #expect(world.run(until: { log.contains(followed) }, timeout: 30), "the agent follows the reference")
        // Every attempt after the reference went to the server it named, until that one answers.
        let referredAt = try #require(tap.attempts.firstIndex { $0.host == "referrer" })
        broker.start()
        let subscriber = try SimulatedTool(world, clientID: "sub", subscribe: ["motion/server-reference/status"])
        #expect(subscriber.waitUntil(timeout: 30) { !Scenario.births(subscriber, "server-reference").isEmpty })
        let birth = try #require(Scenario.births(subscriber, "server-reference").last)
        let link = try #require(birth.broker, "no broker object in the birth")
        #expect(link.server == "broker:1883")
        #expect(link.failovers >= 1)
        #expect(tap.attempts.count > referredAt + 1 && tap.attempts[referredAt + 1].host == "broker")
        #expect(tap.referred >= 1)
        // The refusal's reason is logged as the broker gave it.
        #expect(log.contains("use another server"), "\(log.lines.suffix(20))")
        #expect(!log.contains("which is not in mqtt.servers"), "\(log.lines.suffix(20))")
        print(
            "server-reference (simulated): refused by referrer:1883 with 0x9C naming broker:1883 (listed) \(tap.referred) time(s); followed, birth there after \(tap.attempts.count) attempts, failovers \(link.failovers)"
        )
        world.terminate(device)
        #expect(world.run(until: { !device.isRunning }, timeout: 15))
        #expect(Scenario.endedCleanly(device))
    }

    @Test func aRefusalNamingAServerConfigYamlDoesNotNameIsIgnoredAndThatServerNeverSeesTheCredentials() throws {
        let world = SimulationWorld()
        // The server the reference names is a real (in-memory) broker with the device's account: were the agent
        // to follow it, it would log in there.
        let trap = world.addBroker(name: "trap", options: .init(users: ["server-reference-2": "secret"]))
        let log = SimulationLogRecorder()
        var fleet = SimulatedFleetConfiguration()
        fleet.brokers = ["referrer"]
        fleet.reconnectMaxDelay = 1
        let device = world.addDevice(
            "server-reference-2",
            configuration: try fleet.configuration(
                deviceID: "server-reference-2",
                adding: [("mqtt.username", "server-reference-2")]
            ),
            seed: 42,
            logger: log.logger()
        )
        let tap = world.start(device) {
            SimulatedConnectTap(
                wrapping: $0,
                referrals: ["referrer:1883": .init(reference: "trap:1883", reasonCode: 0x9D)],
                executor: world.executor
            )
        }
        let ignored =
            "the broker referred the agent to \"trap:1883\" (MQTT 5 Server Reference), which is not in mqtt.servers (or mqtt.host) — ignored"
        // Three refusals: each time the agent comes back to its own server, never to the named one.
        #expect(
            world.run(until: { tap.referred >= 3 && log.lines(containing: ignored).count >= 3 }, timeout: 40),
            "\(log.lines.suffix(20))"
        )
        #expect(log.lines(containing: ignored).count == tap.referred, "one warning per reference")
        #expect(!log.contains("the server the broker named"), "\(log.lines.suffix(20))")
        #expect(tap.attempts.allSatisfy { $0.host == "referrer" }, "\(tap.attempts.map(\.host))")
        #expect(!trap.sessionClientIDs.contains("motion-agent-server-reference-2"))
        print(
            "server-reference (simulated): refused by referrer:1883 with 0x9D naming trap:1883 (not listed) \(tap.referred) times; ignored each time, \(tap.attempts.count) attempts, none to trap"
        )
        world.terminate(device)
        #expect(world.run(until: { !device.isRunning }, timeout: 15))
        #expect(Scenario.endedCleanly(device))
        #expect(tap.attempts.allSatisfy { $0.host == "referrer" })
    }
}
