import AgentConfig
import AgentControl
import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// Commands to the production agent in the simulation: each command's effect on the live streams, replies on
/// MQTT 5 and 3.1.1, fleet and group addressing, commands sent while the agent is away, persistence across a
/// restart, reload-config and batching. Moved from the end-to-end suite (what stays there runs the `ctl` binary
/// or sends a real SIGHUP); on virtual time the rates and counts are exact.
@Suite struct ControlCommandSimulationTests {
    typealias Scenario = ControlScenario

    /// The rate from the median interval between samples' timestamps.
    static func medianRate(_ messages: [InboundMessage]) -> Double {
        let t = messages.compactMap { SimulatedTool.json($0)["timestamp"] as? Double }
        let intervals = zip(t.dropFirst(), t).map { $0 - $1 }.sorted()
        guard intervals.count > 2, intervals[intervals.count / 2] > 0 else { return 0 }
        return 1 / intervals[intervals.count / 2]
    }

    @Test func commandsChangeTheLiveStreamsAndAreAnswered() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 5), .init("device-motion", rateHz: 5)]
        let device = world.addDevice("dev-ctl", configuration: try fleet.configuration(deviceID: "dev-ctl"), seed: 11)
        let accelerometer = "motion/dev-ctl/accelerometer"
        let subscriber = try SimulatedTool(world, clientID: "subscriber", subscribe: ["motion/dev-ctl/#"])
        let tool = try SimulatedTool(world, clientID: "operator")
        world.start(device)
        #expect(subscriber.waitUntil(timeout: 20) { subscriber.messages(on: accelerometer).count >= 20 })
        #expect(abs(Self.medianRate(subscriber.messages(on: accelerometer)) - 5) < 0.01)

        // set-rate 20 → the subscriber measures 20 Hz, and the reply gives the effective rate.
        let replies = try tool.send(
            "motion/dev-ctl/control",
            #"{"id": "rate-20", "command": "set-rate", "stream": "accelerometer", "rate_hz": 20}"#
        )
        let reply = try #require(replies.first)
        #expect(
            replies.count == 1 && reply.ok && reply.code == 200 && reply.device == "dev-ctl" && reply.id == "rate-20"
        )
        guard case .stream(let stream)? = reply.result else {
            Issue.record("set-rate's reply has no stream result: \(reply)")
            return
        }
        #expect(stream.rateHz == 20, "the reply gives the effective rate")
        #expect(tool.status("dev-ctl")?.streams?["accelerometer"]?.rateHz == 20, "the retained status shows it at once")
        let mark = subscriber.messages(on: accelerometer).count
        world.run(for: 3)
        let after = Array(subscriber.messages(on: accelerometer).dropFirst(mark))
        #expect(abs(Self.medianRate(after) - 20) < 0.01, "measured \(Self.medianRate(after)) Hz")
        // Every interval is 1/20 s: the source switched at its next block (0.5 s at most), and every sample of
        // the new rate was published.
        let stamps = after.compactMap { SimulatedTool.json($0)["timestamp"] as? Double }
        let intervals = zip(stamps.dropFirst(), stamps).map { $0 - $1 }
        #expect(intervals.allSatisfy { abs($0 - 0.05) < 1e-6 }, "\(intervals)")
        #expect(stamps.count >= 49, "\(stamps.count) samples in the 3 s after the change")

        // stop → nothing more; start → it resumes.
        let stop = try tool.send(
            "motion/dev-ctl/control",
            #"{"id": "stop-1", "command": "stop", "stream": "accelerometer"}"#
        )
        #expect(stop.map(\.code) == [200])
        world.run(for: 0.3)
        let stoppedAt = subscriber.messages(on: accelerometer).count
        world.run(for: 5)
        #expect(subscriber.messages(on: accelerometer).count == stoppedAt, "stopped streams publish nothing")
        #expect(tool.status("dev-ctl")?.streams?["accelerometer"]?.enabled == false)
        let start = try tool.send(
            "motion/dev-ctl/control",
            #"{"id": "start-1", "command": "start", "stream": "accelerometer"}"#
        )
        #expect(start.map(\.code) == [200])
        #expect(subscriber.waitUntil(timeout: 10) { subscriber.messages(on: accelerometer).count >= stoppedAt + 10 })
        let resumed = Array(subscriber.messages(on: accelerometer).dropFirst(stoppedAt))
        #expect(abs(Self.medianRate(resumed) - 20) < 0.01, "it resumes at the rate in force")

        // Reference frame: the device-motion payload says which frame; true north needs a location here.
        let frame = try tool.send(
            "motion/dev-ctl/control",
            #"{"id": "frame-1", "command": "set-reference-frame", "frame": "xMagneticNorthZVertical"}"#
        )
        #expect(frame.map(\.code) == [200], "\(frame)")
        let deviceMotion = "motion/dev-ctl/device-motion"
        #expect(
            subscriber.waitUntil(timeout: 10) {
                subscriber.json(on: deviceMotion).contains {
                    $0["referenceFrame"] as? String == "xMagneticNorthZVertical"
                }
            }
        )
        let north = try #require(subscriber.json(on: deviceMotion).last)
        let heading = try #require(north["heading"] as? Double)
        #expect(heading >= 0 && heading < 360)
        let refused = try tool.send(
            "motion/dev-ctl/control",
            #"{"id": "frame-2", "command": "set-reference-frame", "frame": "xTrueNorthZVertical"}"#
        )
        #expect(refused.map(\.code) == [409], "\(refused)")
        #expect(refused.first?.message.contains("location") == true, "\(refused)")
        #expect(tool.status("dev-ctl")?.streams?["device-motion"]?.referenceFrame == "xMagneticNorthZVertical")
    }

    @Test func repliesOnMQTT311GoToTheReplyTopic() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        let device = world.addDevice(
            "dev-v311",
            configuration: try SimulatedFleetConfiguration().configuration(
                deviceID: "dev-v311",
                mqtt: ["protocol: v311"]
            ),
            seed: 12
        )
        let replyTopic = "motion/dev-v311/control/reply"
        let tool = try SimulatedTool(
            world,
            clientID: "operator",
            protocolVersion: .v311,
            subscribe: [replyTopic, "motion/dev-v311/status"]
        )
        world.start(device)
        #expect(tool.waitUntil(timeout: 20) { tool.status("dev-v311")?.state == .online })
        try tool.publish("motion/dev-v311/control", #"{"id":"v311-1","command":"status"}"#)
        #expect(tool.waitUntil(timeout: 10) { tool.messages(on: replyTopic).count == 1 })
        let reply = try #require(
            tool.messages(on: replyTopic).first.flatMap { SimulatedTool.reply($0.payload, shape: .status) }
        )
        #expect(reply.id == "v311-1" && reply.ok && reply.code == 200)
        guard case .status(let status)? = reply.result else {
            Issue.record("the status command's reply has no status: \(reply)")
            return
        }
        #expect(status.state == .online && status.device == "dev-v311")

        // Every bad-input class gets an error reply and changes nothing.
        let before = tool.configuration("dev-v311")
        let bad: [(String, Int)] = [
            ("{not json", 400), (#"{"id":"b2","command":"fly"}"#, 404),
            (#"{"id":"b3","command":"set-rate","stream":"gyroscope","rate_hz":-4}"#, 400),
            (#"{"id":"b4","command":"start","stream":"thermometer"}"#, 404),
        ]
        for (text, _) in bad { try tool.publish("motion/dev-v311/control", text) }
        #expect(tool.waitUntil(timeout: 10) { tool.messages(on: replyTopic).count >= 1 + bad.count })
        world.run(for: 2)
        let codes = tool.json(on: replyTopic).dropFirst().map { $0["code"] as? Int }
        #expect(codes == bad.map { $0.1 })
        #expect(tool.configuration("dev-v311")?.settings == before?.settings)

        // A request sent over 3.1.1 loses its response topic and correlation data on the way (MQTT 3.1.1 has
        // neither): the answer comes on the device's reply topic, found by its id, as `motion-agent ctl
        // --protocol v311` finds it.
        try tool.publishRequest(
            "motion/dev-v311/control",
            Array(#"{"id":"v311-ping","command":"ping"}"#.utf8),
            responseTopic: TopicScheme.operatorReply(clientID: "operator")
        )
        #expect(tool.waitUntil(timeout: 10) { !tool.replies(on: replyTopic, id: "v311-ping").isEmpty })
        let ping = tool.replies(on: replyTopic, id: "v311-ping")
        #expect(ping.count == 1 && ping.first?["code"] as? Int == 200, "\(ping)")
        #expect(tool.messages.allSatisfy { !$0.topic.hasPrefix("motion-ctl/") })
    }

    @Test func fleetAndGroupCommandsReachTheirMembers() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        var lab = SimulatedFleetConfiguration()
        lab.groups = ["lab"]
        let a = world.addDevice("fleet-a", configuration: try lab.configuration(deviceID: "fleet-a"), seed: 13)
        let b = world.addDevice(
            "fleet-b",
            configuration: try SimulatedFleetConfiguration().configuration(deviceID: "fleet-b"),
            seed: 14
        )
        let tool = try SimulatedTool(world, clientID: "operator")
        world.start(a)
        world.start(b)
        #expect(
            tool.waitUntil(timeout: 20) {
                tool.status("fleet-a")?.state == .online && tool.status("fleet-b")?.state == .online
            }
        )
        // Waiting out the whole timeout for a third answer: exactly the members answer, once each.
        let fleet = try tool.send("motion/fleet/control", #"{"id": "fleet-ping", "command": "ping"}"#, expect: 3)
        #expect(fleet.map(\.device).sorted() == ["fleet-a", "fleet-b"], "\(fleet)")
        #expect(fleet.allSatisfy { $0.ok && $0.code == 200 && $0.id == "fleet-ping" })
        let group = try tool.send("motion/group/lab/control", #"{"id": "lab-ping", "command": "ping"}"#, expect: 2)
        #expect(group.map(\.device) == ["fleet-a"], "\(group)")
        #expect(group.allSatisfy { $0.ok && $0.code == 200 && $0.id == "lab-ping" })
    }

    /// The agent's subscriptions follow `mqtt.clean_session` (AgentBuilder.subscriptionQoS): in a persistent
    /// session they are QoS 1, so a command sent while the agent is away waits at the broker and is answered (once)
    /// when it is back; in a clean session (QoS 0, the default) nothing waits, and the next command is answered.
    @Test(arguments: [false, true]) func aCommandSentWhileTheAgentIsAwayWaitsOnlyInAPersistentSession(
        clean: Bool
    ) throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        let name = clean ? "dev-away-clean" : "dev-away-kept"
        var fleet = SimulatedFleetConfiguration()
        fleet.cleanSession = clean
        let configuration = try fleet.configuration(deviceID: name, mqtt: ["protocol: v311"])
        #expect(configuration.mqtt.cleanSession == clean)
        let device = world.addDevice(name, configuration: configuration, seed: 15)
        let replyTopic = "motion/\(name)/control/reply"
        let observer = try SimulatedTool(
            world,
            clientID: "observer",
            protocolVersion: .v311,
            subscribe: ["motion/\(name)/status", replyTopic]
        )
        func replies() -> [String] { observer.json(on: replyTopic).compactMap { $0["id"] as? String } }
        world.start(device)
        #expect(observer.waitUntil(timeout: 20) { Scenario.births(observer, name) >= 1 })
        world.terminate(device)
        #expect(Scenario.waitForExit(world, device))
        try observer.publish("motion/\(name)/control", #"{"id":"sent-while-away","command":"ping"}"#)
        world.run(for: 5)
        world.start(device)
        #expect(observer.waitUntil(timeout: 20) { Scenario.births(observer, name) >= 2 })
        try observer.publish("motion/\(name)/control", #"{"id":"sent-after","command":"ping"}"#)
        #expect(observer.waitUntil(timeout: 10) { replies().contains("sent-after") })
        world.run(for: 5)
        let expected = clean ? ["sent-after"] : ["sent-while-away", "sent-after"]
        #expect(replies() == expected)
    }

    @Test func changesPersistAcrossARestart() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 2), .init("magnetometer", rateHz: 2)]
        let device = world.addDevice(
            "dev-persist",
            configuration: try fleet.configuration(deviceID: "dev-persist"),
            seed: 16
        )
        let tool = try SimulatedTool(world, clientID: "operator", subscribe: ["motion/dev-persist/status"])
        world.start(device)
        #expect(tool.waitUntil(timeout: 20) { Scenario.births(tool, "dev-persist") == 1 })
        let replies = try tool.send(
            "motion/dev-persist/control",
            #"{"id": "mag-5", "command": "set-rate", "stream": "magnetometer", "interval_s": 0.2}"#
        )
        #expect(replies.map(\.code) == [200], "\(replies)")
        world.terminate(device)
        #expect(Scenario.waitForExit(world, device))
        world.start(device)
        #expect(tool.waitUntil(timeout: 20) { Scenario.births(tool, "dev-persist") == 2 })
        let birth = try #require(tool.status("dev-persist"))
        #expect(birth.state == .online && birth.bootCount == 2)
        #expect(birth.streams?["magnetometer"]?.requestedRateHz == 5, "set-rate survived the restart")
        #expect(birth.streams?["magnetometer"]?.rateHz == 5)
        #expect(birth.streams?["accelerometer"]?.requestedRateHz == 2, "and changed nothing else")
        #expect(
            Scenario.setting(tool, "dev-persist", "streams.magnetometer.rate_hz").source?.hasPrefix("command mag-5")
                == true
        )
    }

    /// reload-config applies a valid config.yaml and keeps the running one when the file is invalid (400, the
    /// problem named). SIGHUP enters the same door (`ControlPlane.reload`); the signal itself is tested end to end.
    @Test func reloadConfigAppliesAValidFileAndKeepsTheOldOneOnAnInvalidFile() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 5)]
        let path = try Scenario.configurationFile(fleet.yaml(deviceID: "dev-reload"))
        let device = world.addDevice(
            "dev-reload",
            configuration: try fleet.configuration(deviceID: "dev-reload"),
            seed: 17
        )
        device.configurationPath = path
        let tool = try SimulatedTool(world, clientID: "operator")
        world.start(device)
        #expect(tool.waitUntil(timeout: 20) { tool.status("dev-reload")?.state == .online })
        #expect(tool.status("dev-reload")?.streams?["accelerometer"]?.requestedRateHz == 5)

        // A changed file: the new rate applies without a restart.
        fleet.streams[0].rateHz = 10
        try fleet.yaml(deviceID: "dev-reload").write(toFile: path, atomically: true, encoding: .utf8)
        let applied = try tool.send("motion/dev-reload/control", #"{"id": "reload-1", "command": "reload-config"}"#)
        #expect(applied.map(\.code) == [200], "\(applied)")
        guard case .reload(let report)? = applied.first?.result else {
            Issue.record("reload-config's reply has no report: \(applied)")
            return
        }
        #expect(report.changedStreams == ["accelerometer"] && report.needsRestart.isEmpty, "\(report)")
        #expect(tool.status("dev-reload")?.streams?["accelerometer"]?.requestedRateHz == 10)
        #expect(device.isRunning)

        // An invalid file: 400 with the problem, nothing changes.
        let invalid = fleet.yaml(deviceID: "dev-reload").replacingOccurrences(of: "rate_hz: 10.0", with: "rate_hz: -3")
        #expect(invalid.contains("rate_hz: -3"))
        try invalid.write(toFile: path, atomically: true, encoding: .utf8)
        let refused = try tool.send("motion/dev-reload/control", #"{"id": "reload-2", "command": "reload-config"}"#)
        #expect(refused.map(\.code) == [400], "\(refused)")
        #expect(refused.first?.message.contains("rate_hz") == true, "\(refused)")
        world.run(for: 1)
        #expect(tool.status("dev-reload")?.streams?["accelerometer"]?.requestedRateHz == 10)
        #expect(device.process?.reconciler.effective.streams[.accelerometer]?.rateHz == 10)
    }

    @Test func setBatchPacksSamplesIntoBinaryOrJSONMessages() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [.init("accelerometer", rateHz: 20)]
        let device = world.addDevice(
            "dev-batch",
            configuration: try fleet.configuration(deviceID: "dev-batch"),
            seed: 18
        )
        let topic = "motion/dev-batch/accelerometer"
        let subscriber = try SimulatedTool(world, clientID: "subscriber", subscribe: [topic])
        let tool = try SimulatedTool(world, clientID: "operator")
        world.start(device)
        #expect(subscriber.waitUntil(timeout: 20) { subscriber.messages(on: topic).count >= 5 })
        let magic = Array("MAB".utf8)
        let binary = try tool.send(
            "motion/dev-batch/control",
            #"{"id": "batch-20", "command": "set-batch", "stream": "accelerometer", "batch": 20, "encoding": "binary"}"#
        )
        #expect(binary.map(\.code) == [200], "\(binary)")
        if case .stream(let stream)? = binary.first?.result {
            #expect(stream.batch == 20 && stream.encoding == "binary")
        } else {
            Issue.record("set-batch's reply has no stream result: \(binary)")
        }
        #expect(
            subscriber.waitUntil(timeout: 10) {
                subscriber.messages(on: topic).filter { $0.payload.starts(with: magic) }.count >= 3
            }
        )
        let batches = subscriber.messages(on: topic).filter { $0.payload.starts(with: magic) }
        // Every binary batch is full: 20 samples of 28 bytes after the 16-byte header.
        for m in batches {
            #expect(Int(m.payload[6]) | Int(m.payload[7]) << 8 == 20)
            #expect(m.payload.count == 16 + 20 * 28)
        }
        let json = try tool.send(
            "motion/dev-batch/control",
            #"{"id": "batch-5", "command": "set-batch", "stream": "accelerometer", "batch": 5, "encoding": "json"}"#
        )
        #expect(json.map(\.code) == [200], "\(json)")
        #expect(
            subscriber.waitUntil(timeout: 10) {
                subscriber.json(on: topic).filter { ($0["batch"] as? [Any])?.count == 5 }.count >= 3
            }
        )
        // Sample seq runs on across the encodings: no sample was lost in the switches.
        var seqs: [Int] = []
        for m in subscriber.messages(on: topic) {
            if m.payload.starts(with: magic) {
                let first = (0..<8).reduce(0) { $0 | Int(m.payload[8 + $1]) << (8 * $1) }
                let count = Int(m.payload[6]) | Int(m.payload[7]) << 8
                seqs += Array(first..<(first + count))
            } else if let batch = SimulatedTool.json(m)["batch"] as? [[String: Any]] {
                seqs += batch.compactMap { $0["seq"] as? Int }
            } else if let seq = SimulatedTool.json(m)["seq"] as? Int {
                seqs.append(seq)
            }
        }
        #expect(seqs.first == 1, "the subscriber was there from the first sample")
        #expect(seqs == Array(1...seqs.count), "continuous sample seq across single, binary and JSON batches")
    }
}
