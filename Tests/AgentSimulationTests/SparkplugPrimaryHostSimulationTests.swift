import AgentSimulation
import Foundation
import MemoryBroker
import SparkplugB
import SwiftProtobuf
import Testing

/// A Sparkplug primary host in the simulation, as the independent host of the end-to-end tests reads the agent:
/// it publishes its STATE (retained JSON on `spBv1.0/STATE/<host>`), decodes every message of the group, and
/// notes a seq out of order (from each NBIRTH's 0, one more per message, modulo 256) or a payload that does not
/// decode.
final class SimulatedSparkplugHost {
    struct Record {
        var type: String
        var topic: String
        var payload: SparkplugPayload
    }

    let tool: SimulatedTool
    let hostID: String
    private var read = 0
    private var decoded: [Record] = []
    private(set) var problems: [String] = []
    private var lastSeq: UInt64?

    let group: String

    init(_ world: SimulationWorld, group: String, hostID: String) throws {
        self.hostID = hostID
        self.group = group
        tool = try SimulatedTool(world, clientID: hostID, subscribe: ["spBv1.0/\(group)/#"])
    }

    /// Publishes the host's STATE, retained, stamped with the world's real-time clock.
    func state(online: Bool) throws {
        let milliseconds = UInt64(tool.world.clock.realtimeSeconds() * 1000)
        try tool.publish(
            SparkplugStateTopic(hostID: hostID).description,
            SparkplugHostState(online: online, timestampMs: milliseconds).payload,
            qos: 1,
            retain: true
        )
    }

    /// Every message of the group so far, decoded.
    var records: [Record] {
        for message in tool.messages.dropFirst(read) {
            let parts = message.topic.split(separator: "/")
            guard parts.count >= 4, parts[0] == "spBv1.0", parts[1] != "STATE" else { continue }
            let type = String(parts[2])
            guard let payload = try? SparkplugPayload(serializedBytes: message.payload) else {
                problems.append("\(message.topic): does not decode")
                continue
            }
            if type == "NBIRTH" {
                lastSeq = payload.seq
                if payload.seq != 0 { problems.append("\(message.topic): NBIRTH with seq \(payload.seq)") }
            } else if ["DBIRTH", "DDATA", "NDATA", "DDEATH"].contains(type) {
                if let last = lastSeq, payload.seq != (last + 1) % 256 {
                    problems.append("\(message.topic): seq \(payload.seq) after \(last)")
                }
                lastSeq = payload.seq
            }
            decoded.append(Record(type: type, topic: message.topic, payload: payload))
        }
        read = tool.messages.count
        return decoded
    }

    func count(_ type: String) -> Int { records.filter { $0.type == type }.count }

    /// The metrics of `record` named as its session's latest birth names them (data carries aliases alone).
    func named(_ record: Record) -> [(name: String, metric: SparkplugPayload.Metric)] {
        let birthType = record.type.hasPrefix("N") ? "NBIRTH" : "DBIRTH"
        let device = record.topic.split(separator: "/").dropFirst(4).first.map(String.init)
        let all = records
        let index = all.lastIndex { $0.topic == record.topic && $0.payload == record.payload } ?? all.count
        let birth = all[..<index].last { candidate in
            candidate.type == birthType
                && candidate.topic.split(separator: "/").dropFirst(4).first.map(String.init) == device
        }
        var names: [UInt64: String] = [:]
        for metric in birth?.payload.metrics ?? [] where metric.hasAlias { names[metric.alias] = metric.name }
        return record.payload.metrics.map { ($0.hasName ? $0.name : names[$0.alias] ?? "alias \($0.alias)", $0) }
    }

    /// Whether some message of `type` (of `device`, for device messages) carries `name` with a value `matches`.
    func carries(
        _ type: String,
        device: String? = nil,
        _ name: String,
        _ matches: (SparkplugPayload.Metric) -> Bool
    ) -> Bool {
        records.contains { record in
            record.type == type && (device == nil || record.topic.hasSuffix("/\(device!)"))
                && named(record).contains { $0.name == name && matches($0.metric) }
        }
    }

    /// A DCMD for `device` of `edgeNode` writing `metric` (by name, as a host may), QoS 0 as hosts send commands.
    func write(
        _ edgeNode: String,
        _ device: String,
        _ name: String,
        _ value: SparkplugPayload.Metric.OneOf_Value
    ) throws {
        var metric = SparkplugPayload.Metric()
        metric.name = name
        switch value {
        case .doubleValue: metric.datatype = 10
        case .booleanValue: metric.datatype = 11
        default: break
        }
        metric.value = value
        var payload = SparkplugPayload()
        payload.timestamp = UInt64(tool.world.clock.realtimeSeconds() * 1000)
        payload.metrics = [metric]
        let topic = "spBv1.0/\(group)/DCMD/\(edgeNode)/\(device)"
        try tool.publish(topic, try Array(payload.serializedBytes() as Data), qos: 0)
    }

    /// The `bdSeq` metric of an NBIRTH or NDEATH.
    static func bdSeq(_ record: Record) -> UInt64? {
        record.payload.metrics.first { $0.name == "bdSeq" }?.longValue
    }
}

/// Sparkplug's primary-host handling (Sparkplug 3.0, 5.8) and a host's DCMD through the control door, the whole
/// agent with `sparkplug.primary_host_id` in the simulation: moved from SparkplugAgentEndToEndTests and SparkplugHostEndToEndTests, whose independent host
/// (pysparkplug) stays for the encoding's interoperability, the will and the ACL.
@Suite struct SparkplugPrimaryHostSimulationTests {
    /// imu-7 streaming accelerometer, device motion and activity through Sparkplug (group `plant`) and waiting for
    /// the primary host `scada`, not started.
    static func device(_ world: SimulationWorld, log: ControlLogRecorder, writes: Bool = false) throws -> SimulatedAgent
    {
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [
            .init("accelerometer", rateHz: 10), .init("device-motion", rateHz: 10), .init("activity", rateHz: 1),
        ]
        fleet.extra = """
            sparkplug:
              enabled: true
              group_id: plant
              streams: [accelerometer, device-motion, activity]
              primary_host_id: scada
              writes: \(writes)

            """
        return world.addDevice("imu-7", configuration: try fleet.configuration(deviceID: "imu-7"), seed: 7, log: log)
    }

    @Test func thePrimaryHostGoingOfflineStopsTheAgentAndItsReturnResumesItWithHistoricalData() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        let log = ControlLogRecorder()
        let device = try Self.device(world, log: log)
        let host = try SimulatedSparkplugHost(world, group: "plant", hostID: "scada")
        try host.state(online: true)
        world.start(device)
        #expect(
            host.tool.waitUntil(timeout: 30) { host.count("DBIRTH") == 3 && host.count("DDATA") >= 5 },
            "the birth after the host's STATE: \(host.records.map(\.type).prefix(20))"
        )

        try host.state(online: false)
        #expect(host.tool.waitUntil(timeout: 30) { host.count("NDEATH") >= 1 }, "the NDEATH")
        let birth = try #require(host.records.last { $0.type == "NBIRTH" })
        #expect(
            host.records.filter { $0.type == "NDEATH" }.allSatisfy {
                SimulatedSparkplugHost.bdSeq($0) == SimulatedSparkplugHost.bdSeq(birth)
            },
            "the NDEATH's bdSeq matches the birth's"
        )
        world.run(for: 2)
        let records = host.records
        let afterDeath = records.dropFirst((records.lastIndex { $0.type == "NDEATH" } ?? 0) + 1)
        #expect(!afterDeath.contains { $0.type == "DDATA" }, "nothing published while the host is offline")
        #expect(log.contains("waiting for the primary host"), "\(log.lines.suffix(20))")

        let beforeReturn = host.records.count
        try host.state(online: true)
        #expect(
            host.tool.waitUntil(timeout: 30) {
                let after = host.records.dropFirst(beforeReturn)
                return after.contains { $0.type == "NBIRTH" }
                    && after.contains { record in
                        record.type == "DDATA" && record.payload.metrics.contains { $0.isHistorical }
                    }
            },
            "the rebirth and the held data"
        )
        #expect(host.problems.isEmpty, "\(host.problems)")
        // Every accelerometer sample once, at the time it was measured: live before, held while the host was
        // away, live after — the 10 Hz grid without a gap or a repeat.
        world.run(for: 1)
        let births = host.records.filter { $0.topic.hasSuffix("/accelerometer") && $0.type == "DBIRTH" }
        let alias = try #require(births.last?.payload.metrics.first { $0.name == "acceleration/x" }?.alias)
        #expect(births.allSatisfy { $0.payload.metrics.first { $0.name == "acceleration/x" }?.alias == alias })
        let stamps = host.records.filter { $0.topic.hasSuffix("/accelerometer") && $0.type == "DDATA" }
            .flatMap(\.payload.metrics).filter { $0.alias == alias }.map(\.timestamp)
        let steps = zip(stamps.dropFirst(), stamps).map { Int($0) - Int($1) }
        #expect(!steps.isEmpty && steps.allSatisfy { $0 == 100 }, "the accelerometer's samples, ms apart: \(steps)")
        let held = host.records.filter { $0.topic.hasSuffix("/accelerometer") && $0.type == "DDATA" }
            .flatMap(\.payload.metrics).filter { $0.alias == alias && $0.isHistorical }
        #expect(held.count >= 20, "\(held.count) samples held over the 2 s the host was offline")
        world.terminate(device)
        #expect(ControlScenario.waitForExit(world, device))
        // Deterministic: no job reached the simulation from another thread (the drainer takes turns, Drive.turns).
        #expect(world.executor.foreignEnqueues == 0, "a thread of the agent's reached the simulation")
    }

    /// With a primary host, as a plant runs: the broker restarts (its retained STATE lost, the host publishes it
    /// again once connected), and the agent births again on the restarted broker with a new bdSeq; the data held
    /// meanwhile comes back historical, with the times it was measured (before the broker came back), then live
    /// data again, and the host sees no seq gap.
    @Test func aBrokerOutageLeavesNoSeqGapAndTheHeldDataComesBackHistorical() throws {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker")
        let log = ControlLogRecorder()
        let device = try Self.device(world, log: log)
        let host = try SimulatedSparkplugHost(world, group: "plant", hostID: "scada")
        try host.state(online: true)
        world.start(device)
        #expect(
            host.tool.waitUntil(timeout: 30) { host.count("DBIRTH") == 3 && host.count("DDATA") >= 20 },
            "the birth and data"
        )
        let before = host.records.count
        broker.stop()
        world.run(for: 1.5)
        let outage = UInt64(world.clock.realtimeSeconds() * 1000)
        broker.start()
        #expect(host.tool.waitUntil(timeout: 10) { host.tool.isConnected }, "the host reconnected")
        try host.state(online: true)
        #expect(
            host.tool.waitUntil(timeout: 30) {
                let after = host.records.dropFirst(before)
                return after.contains { $0.type == "NBIRTH" }
                    && after.contains { record in
                        record.type == "DDATA" && record.payload.metrics.contains { $0.isHistorical }
                    }
            },
            "the rebirth and the held data: \(log.lines.suffix(20))"
        )
        #expect(
            host.tool.waitUntil(timeout: 30) {
                host.records.dropFirst(before).filter { record in
                    record.type == "DDATA" && record.payload.metrics.contains { !$0.isHistorical }
                }.count >= 10
            },
            "live data again"
        )
        // Held data keeps the time it was measured, before the broker came back.
        let historical = host.records.dropFirst(before).filter { $0.type == "DDATA" }.flatMap(\.payload.metrics)
            .filter(\.isHistorical)
        #expect(historical.contains { $0.timestamp < outage })
        // One more per CONNECT, refused ones included (Sparkplug 3.0, 7.1.1).
        let births = host.records.filter { $0.type == "NBIRTH" }
        #expect(births.count >= 2)
        #expect(
            (births.last.flatMap(SimulatedSparkplugHost.bdSeq) ?? 0) >= 1
                && SimulatedSparkplugHost.bdSeq(births.last!) != SimulatedSparkplugHost.bdSeq(births.first!),
            "a new connection, a new bdSeq"
        )
        #expect(host.problems.isEmpty, "the host saw a seq gap or a decoding error: \(host.problems)")
        world.terminate(device)
        #expect(ControlScenario.waitForExit(world, device))
        // Deterministic: no job reached the simulation from another thread (the drainer takes turns, Drive.turns).
        #expect(world.executor.foreignEnqueues == 0, "a thread of the agent's reached the simulation")
    }

    /// A DCMD the operator allows (`sparkplug.writes: true`) goes through the control door: a new rate is applied
    /// and reported back in DDATA with Commands/Applied, the door's own validation refuses an impossible rate
    /// (Commands/Refused), a stream is stopped, and the door logs the command's source. (Moved from
    /// SparkplugAgentEndToEndTests; a DCMD written by an independent host stays end to end in
    /// SparkplugHostEndToEndTests.)
    @Test func aDCMDTheOperatorAllowsGoesThroughTheControlDoor() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        let log = ControlLogRecorder()
        let device = try Self.device(world, log: log, writes: true)
        let host = try SimulatedSparkplugHost(world, group: "plant", hostID: "scada")
        try host.state(online: true)
        world.start(device)
        #expect(host.tool.waitUntil(timeout: 30) { host.count("DBIRTH") == 3 }, "the agent's births")

        try host.write("imu-7", "accelerometer", "config/rateHz", .doubleValue(5))
        #expect(
            host.tool.waitUntil(timeout: 30) {
                host.carries("DDATA", device: "accelerometer", "config/rateHz") { $0.doubleValue == 5 }
                    && host.carries("NDATA", "Commands/Applied") { $0.longValue == 1 }
            },
            "the new rate and Commands/Applied"
        )
        // The control door's own validation refuses what it refuses for every command.
        try host.write("imu-7", "accelerometer", "config/rateHz", .doubleValue(-5))
        #expect(
            host.tool.waitUntil(timeout: 30) { host.carries("NDATA", "Commands/Refused") { $0.longValue == 1 } },
            "the door's refusal"
        )
        try host.write("imu-7", "activity", "config/enabled", .booleanValue(false))
        #expect(
            host.tool.waitUntil(timeout: 30) {
                host.carries("DDATA", device: "activity", "config/enabled") { $0.booleanValue == false }
            },
            "activity stopped"
        )
        // The door logs the command's source: Sparkplug's ids (sparkplug-<time>-<n>), two applied and one refused.
        let applied = log.lines(containing: "control command applied")
        let refused = log.lines(containing: "control command refused")
        #expect(
            applied.filter { $0.contains("agent.command_id=sparkplug-") }.count == 2
                && refused.filter { $0.contains("agent.command_id=sparkplug-") }.count == 1,
            "the door logs the command's source: \(applied + refused)"
        )
        #expect(host.problems.isEmpty, "\(host.problems)")
        world.terminate(device)
        #expect(ControlScenario.waitForExit(world, device))
        // Deterministic: no job reached the simulation from another thread (the drainer takes turns, Drive.turns).
        #expect(world.executor.foreignEnqueues == 0, "a thread of the agent's reached the simulation")
    }
}
