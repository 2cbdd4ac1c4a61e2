import AgentConfig
import AgentPorts
import AgentSimulation
import Foundation
import Integrations
import MemoryBroker
import MotionWire
import TestSupport
import Testing

/// The operator's side on virtual time (moved from OperationsEndToEndTests, issue 40): the health report on
/// `{root}/metrics` and its Prometheus text, and Home Assistant discovery and its removal. What needs the real
/// process stays end to end: its own RSS and CPU in the report, the textfile on a real file system, and
/// `motion-agent watch` in a terminal.
@Suite struct OperationsSimulationTests {
    /// The online sensor and every stream's entities (the stream table's): 14 with the events stream.
    static let entityCount = 1 + StreamDescriptor.table.map(\.homeAssistant.count).reduce(0, +)

    typealias Scenario = DeliveryScenario

    static let prometheus = "/run/motion-agent/metrics.prom"

    /// The Prometheus text the agent last wrote, parsed strictly (nil while it wrote none).
    static func prometheusFamilies(_ device: SimulatedAgent) throws -> [PrometheusTextParser.Family]? {
        guard let bytes = device.process?.host.replacedFile(atPath: prometheus) else { return nil }
        return try PrometheusTextParser.parse(String(decoding: bytes, as: UTF8.self))
    }

    @Test func metricsArriveWithSaneValuesAndThePrometheusTextMatches() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker")
        let subscriber = try SimulatedTool(world, clientID: "metrics-sub", subscribe: ["motion/ops/metrics"])
        var fleet = SimulatedFleetConfiguration()
        fleet.metricsIntervalS = 1
        fleet.streams = [.init("accelerometer", rateHz: 10, qos: 1)]
        let device = world.addDevice(
            "ops",
            configuration: try fleet.configuration(
                deviceID: "ops",
                adding: [("metrics.prometheus_file", Self.prometheus)]
            ),
            seed: 71
        )
        let started = world.now
        world.start(device)
        #expect(subscriber.waitUntil(timeout: 20) { subscriber.messages.count >= 2 })
        let reports = subscriber.messages
        #expect(reports.allSatisfy { !$0.retain })
        let first = Scenario.json(reports[0])
        let second = Scenario.json(reports[1])
        #expect(second["device"] as? String == "ops")
        #expect(second["intervalSeconds"] as? Int == 1)
        #expect(second["bootCount"] as? Int == 1, "the device's first boot")
        let samples = try #require(second["samples"] as? [String: Any])
        let earlierSamples = try #require(first["samples"] as? [String: Any])
        let read = try #require(samples["read"] as? Int)
        let earlierRead = try #require(earlierSamples["read"] as? Int)
        // One report a second of a 10 Hz source: ten samples between them.
        #expect(read - earlierRead == 10, "samples keep coming: \(earlierRead) → \(read)")
        #expect(samples["invalid"] as? Int == 0)
        let messages = try #require(second["messages"] as? [String: Any])
        #expect((messages["published"] as? Int ?? 0) > 0)
        #expect(messages["failed"] as? Int == 0 && messages["droppedOverflow"] as? Int == 0)
        let outbox = try #require(second["outbox"] as? [String: Any])
        #expect((outbox["depth"] as? Int ?? -1) >= 0 && (outbox["bytes"] as? Int ?? -1) >= 0)
        let connection = try #require(second["connection"] as? [String: Any])
        #expect(connection["connected"] as? Bool == true)
        #expect(connection["reconnects"] as? Int == 0 && connection["failures"] as? Int == 0)
        let uptime = try #require(second["uptimeSeconds"] as? Double)
        #expect(uptime >= 1 && uptime <= world.now - started, "uptime \(uptime)")

        // The textfile: the same counters as the newest report, labelled with the device.
        let families = try #require(try Self.prometheusFamilies(device), "no Prometheus text written")
        let readTotal = try #require(families.first { $0.name == "motion_agent_samples_read_total" }?.samples.first)
        #expect(readTotal.labels == ["device": "ops"])
        let newest = try #require(subscriber.messages.last.map(Scenario.json))
        #expect(readTotal.value == Double((newest["samples"] as? [String: Any])?["read"] as? Int ?? -1))
        #expect(families.first { $0.name == "motion_agent_resident_memory_bytes" }?.type == "gauge")

        // A broker restart is one reconnect, exactly.
        broker.restart(keepingStore: false)
        #expect(
            subscriber.waitUntil(timeout: 20) {
                subscriber.messages.contains {
                    (Scenario.json($0)["connection"] as? [String: Any])?["reconnects"] as? Int ?? 0 >= 1
                }
            },
            "a report counting the reconnect"
        )
        world.run(for: 5)
        let after = subscriber.messages.compactMap {
            (Scenario.json($0)["connection"] as? [String: Any])?["reconnects"] as? Int
        }
        #expect(after.last == 1, "\(after)")
        #expect(families.count > 10, "\(families.count) families in the textfile")
    }

    @Test func homeAssistantDiscoveryAppearsAndIsRemovedWhenSwitchedOff() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker")
        let name = "ha"
        let log = SimulationLogRecorder()
        let fleet = SimulatedFleetConfiguration()
        let device = world.addDevice(
            name,
            configuration: try fleet.configuration(deviceID: name, adding: [("home_assistant.enabled", "true")]),
            seed: 72,
            logger: log.logger()
        )
        let status = try SimulatedTool(world, clientID: "status", subscribe: ["motion/\(name)/status"])
        world.start(device)
        #expect(status.waitUntil(timeout: 20) { !Scenario.births(status, name).isEmpty })
        func retainedConfigs() -> [String] { broker.retainedTopics.filter { $0.hasPrefix("homeassistant/") } }
        #expect(world.run(until: { retainedConfigs().count == Self.entityCount }, timeout: 20), "\(retainedConfigs())")

        // A subscriber arriving later gets them, because they are retained.
        let discovery = try SimulatedTool(world, clientID: "discovery", subscribe: ["homeassistant/#"])
        let configs = discovery.messages
        #expect(configs.count == Self.entityCount)
        #expect(configs.allSatisfy { $0.retain && $0.topic.hasSuffix("/config") && $0.topic.contains("/\(name)/") })
        let objects = configs.map(Scenario.json)
        #expect(Set(objects.compactMap { $0["unique_id"] as? String }).count == configs.count)
        #expect(objects.allSatisfy { ($0["state_topic"] as? String)?.hasPrefix("motion/\(name)/") == true })
        #expect(configs.contains { $0.topic == "homeassistant/binary_sensor/\(name)/online/config" })
        #expect(configs.contains { $0.topic == "homeassistant/sensor/\(name)/steps/config" })

        // Restarted with the feature off, it removes them.
        world.terminate(device)
        #expect(world.run(until: { !device.isRunning }, timeout: 15))
        #expect(Scenario.endedCleanly(device))
        let watcher = try SimulatedTool(world, clientID: "watcher", subscribe: ["homeassistant/#"])
        #expect(watcher.messages.count == configs.count)
        let again = world.addDevice(
            reconfiguring: device,
            configuration: try fleet.configuration(deviceID: name, adding: [("home_assistant.enabled", "false")])
        )
        world.start(again)
        #expect(watcher.waitUntil(timeout: 20) { watcher.messages.count >= configs.count * 2 })
        world.run(for: 2)
        let removals = Array(watcher.messages.dropFirst(configs.count))
        #expect(removals.count == configs.count)
        #expect(removals.allSatisfy { $0.payload.isEmpty })
        #expect(Set(removals.map(\.topic)) == Set(configs.map(\.topic)))
        #expect(log.contains("Home Assistant discovery switched off: removed \(Self.entityCount) entity configs"))
        let late = try SimulatedTool(world, clientID: "late", subscribe: ["homeassistant/#"])
        world.run(for: 0.5)
        #expect(late.messages.isEmpty, "no discovery config is retained any more")
        #expect(retainedConfigs().isEmpty)
        // A further restart has nothing left to remove, and says nothing.
        world.terminate(again)
        #expect(world.run(until: { !again.isRunning }, timeout: 15))
        #expect(Scenario.endedCleanly(again))
        world.start(again)
        world.run(for: 5)
        #expect(watcher.messages.count == configs.count * 2)
        #expect(log.lines(containing: "Home Assistant discovery switched off").count == 1)
    }

    /// A new discovery prefix moves the configs under it and removes the old ones; switched off, it removes those
    /// (moved from BrokerIntegrationTests/HomeAssistantPublisherTests, issue 40, which drove the publisher by hand
    /// over a real broker: here the agent restarts with each config.yaml).
    @Test func aNewDiscoveryPrefixMovesTheConfigsAndSwitchingOffRemovesThem() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker")
        let name = "imu-9"
        let fleet = SimulatedFleetConfiguration()
        let watcher = try SimulatedTool(world, clientID: "watcher", subscribe: ["homeassistant/#", "ha/#"])
        var seen = 0
        /// Runs the agent with `settings` until it has published what it will, stops it, and returns what it
        /// published under either prefix.
        func run(
            _ settings: [(path: String, value: String)],
            previous: SimulatedAgent?
        ) throws -> (
            SimulatedAgent, [InboundMessage]
        ) {
            let configuration = try fleet.configuration(deviceID: name, adding: settings)
            let device =
                previous.map { world.addDevice(reconfiguring: $0, configuration: configuration) }
                ?? world.addDevice(name, configuration: configuration, seed: 73)
            world.start(device)
            world.run(for: 5)
            world.terminate(device)
            #expect(world.run(until: { !device.isRunning }, timeout: 15))
            #expect(Scenario.endedCleanly(device))
            let all = watcher.messages
            defer { seen = all.count }
            return (device, Array(all.dropFirst(seen)))
        }
        let (first, published) = try run([("home_assistant.enabled", "true")], previous: nil)
        let expected = HomeAssistantDiscovery(
            prefix: "homeassistant",
            deviceID: name,
            topics: TopicScheme(root: "motion/\(name)")
        ).messages
        #expect(published.count == expected.count && expected.count == Self.entityCount)
        #expect(Set(published.map(\.topic)) == Set(expected.map(\.topic)))
        #expect(published.allSatisfy { $0.qos == 1 && !$0.payload.isEmpty })

        // A new prefix: the configs go under it, and the old ones are removed.
        let (second, moved) = try run(
            [("home_assistant.enabled", "true"), ("home_assistant.discovery_prefix", "ha")],
            previous: first
        )
        let movedConfigs = moved.filter { !$0.payload.isEmpty }
        #expect(movedConfigs.count == published.count)
        #expect(movedConfigs.allSatisfy { $0.topic.hasPrefix("ha/") })
        #expect(Set(moved.filter { $0.payload.isEmpty }.map(\.topic)) == Set(published.map(\.topic)))

        // Switched off: empty retained payloads delete the configs where they now are.
        let (third, removed) = try run(
            [("home_assistant.enabled", "false"), ("home_assistant.discovery_prefix", "ha")],
            previous: second
        )
        #expect(removed.allSatisfy { $0.payload.isEmpty }, "empty retained payloads delete the configs")
        #expect(Set(removed.map(\.topic)) == Set(movedConfigs.map(\.topic)))
        let (_, again) = try run(
            [("home_assistant.enabled", "false"), ("home_assistant.discovery_prefix", "ha")],
            previous: third
        )
        #expect(again.isEmpty, "once removed, a disabled agent publishes nothing")
        // Nothing is left retained for a Home Assistant that connects now.
        let late = try SimulatedTool(world, clientID: "late", subscribe: ["homeassistant/#", "ha/#"])
        world.run(for: 0.5)
        #expect(late.messages.isEmpty)
        #expect(broker.retainedTopics.filter { $0.hasPrefix("homeassistant/") || $0.hasPrefix("ha/") }.isEmpty)
    }
}
