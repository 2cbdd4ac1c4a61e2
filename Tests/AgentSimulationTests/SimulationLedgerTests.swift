import AgentPorts
import AgentSimulation
import Testing

/// The explorer's seq invariant reads `seq` and `timestamp` out of what the brokers took; if it read nothing it
/// could never fail, so it is checked here on the agent's own payloads, single and batched.
@Suite struct SimulationLedgerTests {
    static func pairs(_ payload: [UInt8]) -> [(seq: Int, timestamp: Double)] {
        var pairs: [(Int, Double)] = []
        SimulationLedger.scanSamples(payload) { pairs.append(($0, $1)) }
        return pairs
    }

    @Test(arguments: [1, 5]) func everySampleOfTheAgentsPayloadsIsReadWithItsSeqAndTimestamp(_ batch: Int) throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 5, qos: 1, batch: batch)]
        let device = world.addDevice("dev1", configuration: try fleet.configuration(deviceID: "dev1"), seed: 3)
        let topic = TopicScheme(root: "motion/dev1").stream(.accelerometer)
        let tool = try SimulatedTool(world, clientID: "subscriber", subscribe: [topic])
        world.start(device)
        world.run(for: 30)

        let messages = tool.messages(on: topic)
        #expect(messages.count > 100 / batch)
        let samples = messages.flatMap { Self.pairs($0.payload) }
        #expect(samples.count == messages.count * batch)
        let seqs = samples.map(\.seq)
        #expect(seqs == Array(seqs[0]..<(seqs[0] + seqs.count)), "seqs not one by one: \(seqs.prefix(12))")
        let times = samples.map(\.timestamp)
        #expect(zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 0.2) < 1e-6 }, "\(times.prefix(6))")
    }

    @Test func binaryAndDocumentsWithoutSamplesGiveNothing() {
        #expect(Self.pairs([0x01, 0x02, 0x22, 0x73]).isEmpty)
        #expect(Self.pairs(Array(#"{"state":"online","seq":3}"#.utf8)).isEmpty)
    }
}
