import AgentConfig
import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// An agent whose broker is not there yet, on virtual time (moved from LifecycleEndToEndTests, issue 40): it says
/// why it cannot connect, keeps running and retrying, and streams once the broker comes up. What needs the real
/// process (the retained birth and the will of a killed agent, SIGTERM's exit status, a bad config.yaml stopping
/// it) stays end to end.
@Suite struct ConnectionSimulationTests {
    typealias Scenario = DeliveryScenario

    @Test func anAgentStartedBeforeItsBrokerConnectsWhenTheBrokerComesUp() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker")
        // Configured, not running: nobody listens at its address.
        broker.stop()
        let log = SimulationLogRecorder()
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 10, qos: 0)]
        let device = world.addDevice(
            "late",
            configuration: try fleet.configuration(deviceID: "late"),
            seed: 81,
            logger: log.logger()
        )
        world.start(device)
        #expect(world.run(until: { log.contains("Connection refused") }, timeout: 15), "\(log.lines.suffix(20))")
        world.run(for: 1)
        #expect(device.isRunning, "the agent keeps running while the broker is down")
        broker.start()
        let subscriber = try SimulatedTool(world, clientID: "late-sub", subscribe: ["motion/late/#"])
        #expect(subscriber.waitUntil(timeout: 20) { subscriber.messages(on: "motion/late/accelerometer").count >= 10 })
        #expect(Scenario.statuses(subscriber, "late").first?.state == .online)
    }
}
