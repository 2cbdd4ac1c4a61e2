import AgentPorts
import AgentSimulation
import MemoryBroker
import Testing

@Suite struct SimulatedToolTests {
    @Test func aToolReconnectsAfterTheBrokerComesBack() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker", options: .init(persistence: true))
        let tool = try SimulatedTool(world, clientID: "sub", cleanSession: false, subscribe: ["a/#"])
        #expect(tool.isConnected)
        broker.stop()
        world.run(for: 2)
        #expect(!tool.isConnected)
        broker.start()
        #expect(tool.waitUntil(timeout: 10) { tool.isConnected })
    }
}

extension SimulatedToolTests {
    @Test func aTaskSleepsOnTheVirtualClock() throws {
        let world = SimulationWorld()
        nonisolated(unsafe) var ticks: [Double] = []
        world.executor.run {
            Task {
                for _ in 0..<3 {
                    try? await world.clock.sleep(seconds: 0.5)
                    ticks.append(world.now)
                }
            }
        }
        world.run(for: 2)
        #expect(ticks == [100.5, 101.0, 101.5])
    }
}
