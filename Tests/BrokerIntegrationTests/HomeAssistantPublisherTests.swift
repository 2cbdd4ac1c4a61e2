import AgentConfig
import AgentPipeline
import AgentPorts
import AgentRuntime
import Foundation
import Integrations
import Logging
import MosquittoTransport
import MotionWire
import Platform
import Synchronization
import TestSupport
import Testing

/// Home Assistant discovery through a real broker and client: what reaches a subscriber is what Home Assistant
/// would see.
@Suite(.timeLimit(.minutes(5))) struct HomeAssistantPublisherTests {
    @Test func switchingOffRemovesWhatWasPublished() async throws {
        let directory = NSTemporaryDirectory() + "ha-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = AgentConfiguration()
        configuration.device.id = "imu-9"
        configuration.homeAssistant.enabled = true
        let topics = TopicScheme(root: "motion/imu-9")
        // A real broker and client: what reaches a subscriber is what Home Assistant would see.
        let broker = try await MosquittoBroker.started()
        let client = MosquittoClient()
        try client.connect(broker.connectOptions(clientID: "ha-publisher"))
        let pump = Task { for await event in client.events { if case .connected = event { break } } }
        await pump.value
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["homeassistant/#", "ha/#"])
        var seen = 0
        func connect() async throws -> [InboundMessage] {
            HomeAssistantPublisher(
                configuration: configuration,
                topics: topics,
                broker: client,
                state: StateFiles(path: directory),
                logger: Logger(label: "test")
            ).connected()
            try await Task.sleep(for: .milliseconds(300))
            let all = subscriber.messages
            defer { seen = all.count }
            return Array(all.dropFirst(seen))
        }
        let published = try await connect()
        #expect(
            published.count
                == HomeAssistantDiscovery(prefix: "homeassistant", deviceID: "imu-9", topics: topics).messages.count
        )
        #expect(published.allSatisfy { $0.qos == 1 && !$0.payload.isEmpty })

        // A new prefix: the configs go under it, and the old ones are removed.
        configuration.homeAssistant.discoveryPrefix = "ha"
        let moved = try await connect()
        #expect(moved.filter { $0.topic.hasPrefix("ha/") && !$0.payload.isEmpty }.count == published.count)
        #expect(Set(moved.filter { $0.payload.isEmpty }.map(\.topic)) == Set(published.map(\.topic)))

        configuration.homeAssistant.enabled = false
        let removed = try await connect()
        #expect(removed.allSatisfy { $0.payload.isEmpty }, "empty retained payloads delete the configs")
        #expect(Set(removed.map(\.topic)) == Set(moved.filter { !$0.payload.isEmpty }.map(\.topic)))

        #expect(try await connect().isEmpty, "once removed, a disabled agent publishes nothing")
        // Nothing is left retained for a Home Assistant that connects now.
        let late = try await CapturingSubscriber(broker: broker, filters: ["homeassistant/#", "ha/#"])
        try await Task.sleep(for: .milliseconds(300))
        #expect(late.messages.isEmpty)
        await late.close()
        await subscriber.close()
        await client.disconnect(flushTimeout: 1)
    }
}
