import AgentPorts
import AgentSimulation
import MemoryBroker
import Synchronization
import Testing

@Suite struct SimulationSmokeTests {
    @Test func anAgentConnectsAndStreamsOnVirtualTime() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker")
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 2, qos: 1)]
        let device = world.addDevice("dev1", configuration: try fleet.configuration(deviceID: "dev1"), seed: 1)
        let received = Mutex<[String: Int]>([:])
        broker.setDeliveryObserver { delivery in
            received.withLock { $0[delivery.topic, default: 0] += 1 }
        }
        let listener = world.makeClient()
        try listener.connect(broker.connectOptions(clientID: "listener"))
        world.run(for: 1)
        try listener.subscribe(["motion/#"], qos: 1)
        world.start(device)
        world.run(for: 60)
        let counts = received.withLock { $0 }
        #expect(counts["motion/dev1/status"] ?? 0 >= 1)
        #expect((110...122).contains(counts["motion/dev1/accelerometer"] ?? 0), "\(counts)")
        #expect(world.executor.foreignEnqueues == 0)
    }
}
