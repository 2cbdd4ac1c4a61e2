import AgentPorts
import AgentSimulation
import Testing

/// `{root}/configuration` carries every setting's account: published with each connection's birth and when the
/// account changed, not with every status (whose time alone differs).
@Suite struct ConfigurationAccountSimulationTests {
    @Test func theAccountIsPublishedAtBirthAndOnChangeOnly() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 5, qos: 1, durable: true)]
        let device = world.addDevice("dev-acc", configuration: try fleet.configuration(deviceID: "dev-acc"), seed: 5)
        let topics = TopicScheme(root: "motion/dev-acc")
        let watcher = try SimulatedTool(world, clientID: "watcher", subscribe: [topics.status, topics.configuration])
        let tool = try SimulatedTool(world, clientID: "operator")
        world.start(device)
        #expect(watcher.waitUntil(timeout: 10) { !watcher.messages(on: topics.configuration).isEmpty })
        world.run(for: 5)
        let accounts = watcher.messages(on: topics.configuration).count
        let statuses = watcher.messages(on: topics.status).count

        // A command that changes a stream: a new status and a new account.
        _ = try tool.send(
            topics.control,
            #"{"id": "r1", "command": "set-rate", "stream": "accelerometer", "rate_hz": 10}"#
        )
        world.run(for: 2)
        #expect(watcher.messages(on: topics.status).count > statuses)
        #expect(watcher.messages(on: topics.configuration).count == accounts + 1)
        let account = try #require(tool.configuration("dev-acc"))
        #expect(account.settings["streams.accelerometer.rate_hz"]?.value == "10")

        // Statuses with nothing new in the account (the state directory full, then room again): the account stays.
        let before = watcher.messages(on: topics.configuration).count
        let statusesBefore = watcher.messages(on: topics.status).count
        device.disk.capacityBytes = device.disk.usedBytes + 2048
        world.run(for: 30)
        device.disk.capacityBytes = nil
        world.run(for: 30)
        #expect(watcher.messages(on: topics.status).count > statusesBefore, "no status was republished meanwhile")
        #expect(watcher.messages(on: topics.configuration).count == before)

        // A new connection: the birth carries the account again (the broker may be another node).
        for broker in world.brokers { broker.dropConnection(clientID: "motion-agent-dev-acc") }
        world.run(for: 10)
        #expect(watcher.messages(on: topics.configuration).count == before + 1)
    }
}
