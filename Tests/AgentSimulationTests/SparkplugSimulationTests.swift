import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import SparkplugB
import SwiftProtobuf
import Testing

/// The agent as a Sparkplug B edge node, on virtual time: its primary host's STATE and a broker outage. The
/// independent host's decoding of the same (pysparkplug, real mosquitto) stays in `SparkplugIntegrationTests`;
/// what the node decides — when it is born, what it holds, `is_historical`, `seq` without gaps — is logic, here.
@Suite struct SparkplugSimulationTests {
    /// One Sparkplug message as the host sees it.
    struct Received {
        var type: String
        var payload: SparkplugPayload
    }

    /// A device carrying the accelerometer at 10 Hz to group `plant`, waiting for the primary host `scada`.
    static func world() throws -> (SimulationWorld, MemoryBroker, SimulatedAgent, SimulatedTool) {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker")
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 10)]
        let configuration = try fleet.configuration(
            deviceID: "imu-7",
            adding: [
                ("sparkplug.enabled", "true"), ("sparkplug.group_id", "plant"),
                ("sparkplug.primary_host_id", "scada"), ("sparkplug.streams", "[accelerometer]"),
            ]
        )
        let device = world.addDevice("imu-7", configuration: configuration, seed: 11)
        let host = try SimulatedTool(world, clientID: "scada", subscribe: ["spBv1.0/plant/#"])
        return (world, broker, device, host)
    }

    static func state(_ host: SimulatedTool, _ world: SimulationWorld, online: Bool) throws {
        let timestamp = UInt64(world.clock.realtimeSeconds() * 1000)
        try host.publish("spBv1.0/STATE/scada", #"{"online": \#(online), "timestamp": \#(timestamp)}"#, retain: true)
    }

    static func received(_ host: SimulatedTool) throws -> [Received] {
        try host.messages.compactMap { message in
            let levels = message.topic.split(separator: "/")
            guard levels.count >= 4, levels[0] == "spBv1.0", levels[1] == "plant" else { return nil }
            return Received(type: String(levels[2]), payload: try SparkplugPayload(serializedBytes: message.payload))
        }
    }

    /// Sparkplug 3.0's `seq`: 0 on the NBIRTH, then one more per message of the node (mod 256) until the next
    /// NBIRTH. Returns the first place it breaks.
    static func seqBreak(_ messages: [Received]) -> String? {
        var expected: UInt64?
        for (index, message) in messages.enumerated() {
            switch message.type {
            case "NDEATH": continue
            case "NBIRTH":
                guard message.payload.seq == 0 else { return "NBIRTH #\(index) has seq \(message.payload.seq)" }
                expected = 1
            default:
                guard let want = expected else { return "\(message.type) #\(index) before any NBIRTH" }
                guard message.payload.seq == want else {
                    return "\(message.type) #\(index) has seq \(message.payload.seq), \(want) was next"
                }
                expected = (want + 1) % 256
            }
        }
        return nil
    }

    static func historical(_ message: Received) -> Bool { message.payload.metrics.contains { $0.isHistorical } }

    @Test func thePrimaryHostGoingOfflineStopsTheAgentAndItsReturnResumesItWithHistoricalData() throws {
        let (world, _, device, host) = try Self.world()
        world.start(device)
        world.run(for: 5)
        #expect(try Self.received(host).isEmpty, "the node published before its primary host said it is online")

        try Self.state(host, world, online: true)
        #expect(
            host.waitUntil(timeout: 10) {
                let messages = (try? Self.received(host)) ?? []
                return messages.contains { $0.type == "DBIRTH" } && messages.filter { $0.type == "DDATA" }.count >= 5
            }
        )
        try Self.state(host, world, online: false)
        #expect(host.waitUntil(timeout: 10) { ((try? Self.received(host)) ?? []).contains { $0.type == "NDEATH" } })
        let died = try Self.received(host).count
        world.run(for: 20)
        let whileOffline = try Self.received(host).dropFirst(died)
        #expect(
            !whileOffline.contains { $0.type == "DDATA" || $0.type == "NBIRTH" },
            "published while the primary host was offline: \(whileOffline.map(\.type))"
        )

        let offlineSince = world.clock.realtimeSeconds() - 20
        try Self.state(host, world, online: true)
        #expect(
            host.waitUntil(timeout: 10) {
                let after = ((try? Self.received(host)) ?? []).dropFirst(died)
                return after.contains { $0.type == "NBIRTH" } && after.contains(where: Self.historical)
                    && after.filter { $0.type == "DDATA" && !Self.historical($0) }.count >= 10
            }
        )
        let all = try Self.received(host)
        // What was held while the host was away comes back with the time it was measured.
        let held = all.dropFirst(died).filter(Self.historical).flatMap(\.payload.metrics).filter(\.isHistorical)
        #expect(held.contains { Double($0.timestamp) / 1000 < offlineSince + 10 })
        #expect(Self.seqBreak(all) == nil, "\(Self.seqBreak(all) ?? "")")
        #expect(world.executor.foreignEnqueues == 0, "a thread of the node's reached the simulation")
    }

    @Test func aBrokerOutageLeavesNoSeqGapAndTheHeldDataComesBackHistorical() throws {
        let (world, broker, device, host) = try Self.world()
        world.start(device)
        try Self.state(host, world, online: true)
        #expect(
            host.waitUntil(timeout: 10) { ((try? Self.received(host)) ?? []).filter { $0.type == "DDATA" }.count >= 20 }
        )
        let before = try Self.received(host).count

        broker.stop()
        let outage = world.clock.realtimeSeconds()
        world.run(for: 5)
        broker.start()
        // The host is a client too: it comes back, and says it is online again (its STATE is retained).
        #expect(host.waitUntil(timeout: 30) { host.isConnected })
        try Self.state(host, world, online: true)
        #expect(
            host.waitUntil(timeout: 30) {
                let after = ((try? Self.received(host)) ?? []).dropFirst(before)
                return after.contains { $0.type == "NBIRTH" } && after.contains(where: Self.historical)
                    && after.filter { $0.type == "DDATA" && !Self.historical($0) }.count >= 10
            }
        )
        let all = try Self.received(host)
        let held = all.dropFirst(before).filter(Self.historical).flatMap(\.payload.metrics).filter(\.isHistorical)
        // Held data keeps the time it was measured: during the outage, before the broker came back.
        #expect(held.contains { Double($0.timestamp) / 1000 < outage + 5 })
        // One more bdSeq per CONNECT (Sparkplug 3.0, 7.1.1).
        let births = all.filter { $0.type == "NBIRTH" }
        let bdSeqs = births.compactMap { $0.payload.metrics.first { $0.name == "bdSeq" }?.longValue }
        #expect(bdSeqs.count >= 2 && bdSeqs.last! > bdSeqs.first!, "bdSeq per birth: \(bdSeqs)")
        #expect(Self.seqBreak(all) == nil, "\(Self.seqBreak(all) ?? "")")
        #expect(world.executor.foreignEnqueues == 0, "a thread of the node's reached the simulation")
    }
}
