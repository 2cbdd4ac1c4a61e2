import AgentConfig
import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// `mqtt.servers` on virtual time (moved from FailoverEndToEndTests' pair of mosquittos, issue 40): the agent
/// streams 200 Hz QoS 1 durable samples to one of two brokers, that broker stops, the agent fails over to the other,
/// and nothing is lost. On real parts the two were bridged to a third broker where one subscriber counted; here a
/// persistent-session subscriber on each broker counts, and the stopped broker, started again, hands its
/// subscriber what it still held — what its bridge did. (The RabbitMQ cluster case stays end to end: it is about
/// RabbitMQ.)
@Suite struct FailoverSimulationTests {
    typealias Scenario = DeliveryScenario

    @Test func twoBrokersLoseNothingWhenTheAgentsOneStops() throws {
        let world = SimulationWorld()
        let edges = ["edge-a", "edge-b"].map { world.addBroker(name: $0, options: .init(persistence: true)) }
        let name = "failover-pair"
        let topic = "motion/\(name)/accelerometer"
        let subscribers = try edges.map { edge in
            try DeliveryPersistentSubscriber(
                world,
                broker: edge,
                clientID: "sub-\(edge.name)",
                subscribe: [topic, "motion/\(name)/status"]
            )
        }
        func seqs() -> [Int] { subscribers.flatMap { Scenario.seqs($0, topic) } }
        func births() -> [AgentStatus] { subscribers.flatMap { Scenario.births($0, name) } }
        func newestBirth() -> AgentStatus? { births().max { $0.time < $1.time } }

        var fleet = SimulatedFleetConfiguration()
        fleet.brokers = edges.map(\.name)
        fleet.streams = [.init("accelerometer", rateHz: 200, qos: 1, durable: true)]
        fleet.reconnectMaxDelay = 1
        let log = SimulationLogRecorder()
        let device = world.addDevice(
            name,
            configuration: try fleet.configuration(deviceID: name, adding: [("outbox.replay_rate", "500")]),
            seed: 61,
            logger: log.logger()
        )
        world.start(device)
        #expect(world.run(until: { seqs().count >= 400 }, timeout: 60))
        let first = try #require(newestBirth()?.broker?.server, "no birth naming its server")
        let stoppedEdge = try #require(edges.first { "\($0.name):1883" == first })
        let birthsBefore = births().count
        let stopped = world.now
        stoppedEdge.stop()
        let stoppedSubscriber = try #require(subscribers.first { $0.broker === stoppedEdge })
        stoppedSubscriber.leave()
        #expect(world.run(until: { births().count > birthsBefore }, timeout: 60), "no birth after the failover")
        let failedOver = world.now - stopped
        let link = try #require(newestBirth()?.broker)
        #expect(link.server != first, "the agent should be on the other server")
        #expect(link.failovers >= 1, "failovers counted")
        #expect(log.contains("failing over to \(link.server)"), "the log names the failover")
        // The stopped broker comes back with its store: what it held for its subscriber arrives.
        stoppedEdge.start()
        try stoppedSubscriber.comeBack()
        let live = try #require(subscribers.first { "\($0.broker.name):1883" == link.server })
        #expect(live.waitUntil(timeout: 60) { Scenario.caughtUp(live, topic) }, "live data did not resume")
        let caughtUp = world.now - stopped
        #expect(world.run(until: { Scenario.drained(seqs()) }, timeout: 60), "the backlog did not drain")
        let outbox = try #require(Scenario.stop(world, device, live), "no goodbye")
        let appended = Int(try #require(outbox.durableAppended))
        let all = seqs()
        let unique = Set(all)
        let lost = Scenario.missing(all, upTo: appended).count
        print(
            "failover (simulated): \(first) → \(link.server): sent \(appended), received \(all.count), unique \(unique.count), lost \(lost), duplicated \(all.count - unique.count), birth on the next server \(failedOver) s and live data \(caughtUp) s after the stop"
        )
        #expect(outbox.durableDepth == 0)
        #expect(outbox.durableDropped == 0)
        #expect(lost == 0)
        #expect(unique.count == appended && unique.max() == appended)
        #expect(all.count - unique.count <= 100, "duplicates beyond one in-flight window")
        for edge in edges { #expect(edge.drops(clientID: "sub-\(edge.name)").total == 0) }
    }
}
