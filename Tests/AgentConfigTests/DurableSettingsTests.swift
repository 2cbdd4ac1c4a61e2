import AgentPorts
import Testing

@testable import AgentConfig

@Suite struct DurableSettingsTests {
    @Test func onlyTheEventsStreamIsDurableByDefaultAndReplayRateIs500() throws {
        let configuration = try ConfigurationLoader.decode(
            yaml: "device:\n  id: d\n",
            source: "config.yaml",
            environment: [:]
        )
        // Only the motion events stream is durable by default: a fall must survive an outage and a restart.
        #expect(StreamName.allCases.filter { configuration[stream: $0].durable } == [.events])
        #expect(configuration.outbox.replayRate == 500)
    }

    @Test func aQoS1StreamCanBeDurable() throws {
        let yaml = "outbox:\n  replay_rate: 2000\nstreams:\n  accelerometer:\n    qos: 1\n    durable: true\n"
        let configuration = try ConfigurationLoader.decode(yaml: yaml, source: "config.yaml", environment: [:])
        #expect(configuration[stream: .accelerometer].durable)
        #expect(configuration[stream: .accelerometer].qos == 1)
        #expect(configuration.outbox.replayRate == 2000)
    }
}
