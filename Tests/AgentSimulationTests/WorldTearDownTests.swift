import AgentPorts
import MemoryBroker
import Testing

@testable import AgentSimulation

/// The explorer runs thousands of worlds in one process: each must be freed when it ends. A reference cycle in the
/// agent's graph (the hub's fault box held the controller, which holds the hub), a task left asleep on the virtual
/// clock and the operator's task waiting for its client's events kept every schedule's world alive: 2.2 GB of
/// memory after 1000 seeds.
@Suite struct WorldTearDownTests {
    private final class Probes: @unchecked Sendable {
        private var objects: [(String, () -> AnyObject?)] = []

        func watch(_ name: String, _ object: AnyObject) {
            objects.append((name, { [weak object] in object }))
        }

        var alive: [String] { objects.filter { $0.1() != nil }.map(\.0) }
    }

    @Test func aWorldAndEveryProcessItRanAreFreedAfterTearDown() throws {
        let probes = Probes()
        do {
            let world = SimulationWorld()
            let broker = world.addBroker(name: "broker")
            var fleet = SimulatedFleetConfiguration()
            fleet.streams = [.init("accelerometer", rateHz: 2, qos: 1, durable: true)]
            let device = world.addDevice("dev1", configuration: try fleet.configuration(deviceID: "dev1"), seed: 1)
            world.start(device)
            world.run(for: 10)
            let first = try #require(device.process)
            world.kill(device)
            world.run(for: 1)
            world.start(device)
            world.run(for: 10)
            let second = try #require(device.process)
            for (name, process) in [("first process", first), ("second process", second)] {
                probes.watch(name, process)
                probes.watch("\(name)'s client", process.client)
                probes.watch("\(name)'s sensor source", process.source)
                probes.watch("\(name)'s controller", process.controller)
                probes.watch("\(name)'s hub", process.services.parts.hub)
                probes.watch("\(name)'s publisher", process.publisher)
            }
            probes.watch("world", world)
            probes.watch("clock", world.clock)
            probes.watch("network", world.network)
            probes.watch("broker", broker)
            probes.watch("disk", device.disk)
            world.tearDown()
            #expect(world.clock.sleepers == 0)
        }
        #expect(probes.alive == [])
    }
}
