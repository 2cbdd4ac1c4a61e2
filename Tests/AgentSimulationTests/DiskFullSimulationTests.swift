import AgentConfig
import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import TestSupport
import Testing

/// The state directory's file system fills up under a 200 Hz QoS 1 durable stream while the broker is away, on
/// virtual time (moved from DiskFullEndToEndTests, issue 40; the simulated disk refuses what does not fit with the
/// no-space error the real calls give): the agent keeps running, says so in its log, health.json, the Prometheus
/// file and the status, resumes durable logging when space returns, and every message is either delivered or
/// counted dropped — exactly. That state files are replaced whole on a real full file system (never torn, no
/// temporary file left) needs real parts: DiskFullEndToEndTests keeps that, on a real tmpfs.
@Suite struct DiskFullSimulationTests {
    typealias Scenario = DeliveryScenario

    static let prometheus = "/run/motion-agent/metrics.prom"

    /// One sample's value of a family in the Prometheus text the agent last wrote, parsed strictly (nil while the
    /// text or the family is absent).
    static func gauge(_ device: SimulatedAgent, _ name: String) -> Double? {
        guard let bytes = device.process?.host.replacedFile(atPath: prometheus),
            let families = try? PrometheusTextParser.parse(String(decoding: bytes, as: UTF8.self)),
            let sample = families.first(where: { $0.name == name })?.samples.first
        else { return nil }
        return sample.value
    }

    @Test func aFullStateDirectoryDropsCountsAndResumes() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker", options: .init(persistence: true))
        let topic = "motion/chaos-full/accelerometer"
        let subscriber = try DeliveryPersistentSubscriber(
            world,
            clientID: "chaos-sub",
            subscribe: [topic, "motion/chaos-full/status"]
        )
        broker.stop()
        subscriber.leave()

        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 200, qos: 1, durable: true)]
        // outbox.max_bytes (4 MiB) is far above the file system: the disk is the bound that bites.
        fleet.outboxMaxBytes = 4 << 20
        fleet.metricsIntervalS = 1
        fleet.reconnectMaxDelay = 1
        let log = SimulationLogRecorder()
        let device = world.addDevice(
            "chaos-full",
            configuration: try fleet.configuration(
                deviceID: "chaos-full",
                adding: [("outbox.replay_rate", "500"), ("metrics.prometheus_file", Self.prometheus)]
            ),
            seed: 51,
            logger: log.logger()
        )
        // A small file system: after the 256 KiB the log leaves free for the agent's state files, about 200 KiB
        // for the log, which 200 Hz fill within seconds.
        device.disk.capacityBytes = 456 << 10
        world.start(device)

        // Full: the log says so once, health.json and the Prometheus file say so, the agent runs on.
        #expect(world.run(until: { log.contains("is full") }, timeout: 30), "\(log.lines.suffix(20))")
        let fullAt = world.now
        #expect(log.lines(containing: "is full").count == 1, "\(log.lines(containing: "is full"))")
        #expect(world.run(until: { Self.gauge(device, "motion_agent_durable_storage_problem") == 1 }, timeout: 10))
        #expect(world.run(until: { device.process?.host.health?.storageProblem != nil }, timeout: 10))
        let problem = try #require(device.process?.host.health?.storageProblem)
        #expect(problem.contains("full") && problem.contains("free space"), "\(problem)")
        world.run(for: 10)
        #expect(device.isRunning)
        let droppedWhileFull = Self.gauge(device, "motion_agent_durable_dropped_no_space_total") ?? 0
        #expect(droppedWhileFull > 0)
        // Full until space returns: the problem did not clear by itself.
        #expect(!log.contains("has room again"))
        // Said once, not again while it lasts (the health file, the metrics and the status keep saying it).
        #expect(log.lines(containing: "is full").count == 1, "\(log.lines(containing: "is full"))")
        #expect(device.disk.usedBytes <= 456 << 10)

        // Space returns: logging resumes by itself and every report clears.
        device.disk.capacityBytes = nil
        let freedAt = world.now
        #expect(world.run(until: { log.contains("has room again") }, timeout: 15))
        let resumed = world.now - freedAt
        #expect(world.run(until: { Self.gauge(device, "motion_agent_durable_storage_problem") == 0 }, timeout: 10))
        #expect(world.run(until: { device.process?.host.health?.storageProblem == nil }, timeout: 10))
        world.run(for: 2)

        // The broker returns: what was kept arrives, and kept + dropped is everything the stream produced.
        broker.start()
        try subscriber.comeBack()
        #expect(subscriber.waitUntil(timeout: 60) { Scenario.caughtUp(subscriber, topic) })
        let outbox = try #require(Scenario.stop(world, device, subscriber), "no goodbye")

        let seqs = Scenario.seqs(subscriber, topic)
        let unique = Set(seqs)
        let produced = try #require(unique.max())
        let dropped = Int(try #require(outbox.durableDropped))
        let droppedNoSpace = Int(try #require(outbox.durableDroppedNoSpace))
        let appended = Int(try #require(outbox.durableAppended))
        let missing = Scenario.missing(seqs, upTo: produced).count
        print(
            "faults (simulated): disk full (456 KiB file system, broker down, 200 Hz QoS 1 durable): produced \(produced), written \(appended), received \(seqs.count), unique \(unique.count), dropped \(dropped) (no space \(droppedNoSpace)), missing \(missing), duplicated \(seqs.count - unique.count), logging resumed \(resumed) s after space returned, full for \(freedAt - fullAt) s"
        )
        #expect(droppedNoSpace > 0)
        #expect(missing == dropped, "every message not received is counted dropped, and nothing else")
        #expect(unique.count + dropped == produced)
        #expect(outbox.durableDepth == 0)
        #expect(outbox.durableStorageProblem == nil)
        #expect(seqs.count - unique.count <= 100, "duplicates beyond one in-flight window")
        // What the log removed to make room while full is counted among the dropped: every record it wrote is
        // delivered or so removed.
        let records = device.disk.records
        #expect(records.filter { $0.removedWhileFull }.count <= dropped)
        #expect(broker.drops(clientID: "chaos-sub").total == 0)
    }
}
