import AgentConfig
import AgentControl
import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// Fleet desired state on the production agent in the simulation (docs/fleet.md): retained documents reach a
/// device whenever it connects, layers and commands combine per key, bad or old documents are refused and
/// reported, and what a device was told survives restarts without the broker. Moved from the end-to-end suite:
/// every check here is the agent's logic, on virtual time.
@Suite struct DesiredStateSimulationTests {
    typealias Scenario = ControlScenario

    /// A world with one broker (its store kept across a stop), an operator tool and a device streaming the
    /// accelerometer, gyroscope and magnetometer at 5 Hz (config.yaml's rate for each).
    static func fleet(groups: [String] = []) -> SimulatedFleetConfiguration {
        var fleet = SimulatedFleetConfiguration()
        fleet.groups = groups
        fleet.streams = [
            .init("accelerometer", rateHz: 5), .init("gyroscope", rateHz: 5), .init("magnetometer", rateHz: 5),
        ]
        return fleet
    }

    @Test func aNewDeviceConvergesOnItsFirstConnectionAnOfflineOneOnReconnectAndBootsWithoutTheBrokerOnWhatItKept()
        throws
    {
        let world = SimulationWorld()
        let broker = world.addBroker(name: "broker", options: .init(persistence: true))
        let tool = try SimulatedTool(world, clientID: "operator")
        // Published before the device ever ran: the broker holds it for the device's first connection.
        try tool.publish(
            "motion/fleet/desired",
            #"{"version": 1, "streams": {"accelerometer": {"rate_hz": 10}}}"#,
            retain: true
        )
        let log = ControlLogRecorder()
        let device = world.addDevice(
            "dev-new",
            configuration: try Self.fleet().configuration(deviceID: "dev-new"),
            seed: 1,
            log: log
        )
        world.start(device)
        #expect(Scenario.waitFor(tool, "dev-new", "streams.accelerometer.rate_hz", "10"))
        #expect(Scenario.setting(tool, "dev-new", "streams.accelerometer.rate_hz").source == "fleet v1")
        #expect(Scenario.desired(tool, "dev-new") == ["fleet": 1])
        #expect(tool.status("dev-new")?.streams?["accelerometer"]?.requestedRateHz == 10)
        #expect(tool.status("dev-new")?.streams?["accelerometer"]?.rateHz == 10)

        // Offline while the fleet moves on: the new version arrives at the next connection.
        world.terminate(device)
        #expect(Scenario.waitForExit(world, device))
        #expect(tool.status("dev-new")?.state == .offline)
        try tool.publish(
            "motion/fleet/desired",
            #"{"version": 2, "streams": {"accelerometer": {"rate_hz": 20}}}"#,
            retain: true
        )
        world.start(device)
        #expect(Scenario.waitFor(tool, "dev-new", "streams.accelerometer.rate_hz", "20"))
        #expect(Scenario.setting(tool, "dev-new", "streams.accelerometer.rate_hz").source == "fleet v2")
        world.terminate(device)
        #expect(Scenario.waitForExit(world, device))

        // The broker down at boot: the device runs the desired state it kept until a broker answers.
        broker.stop()
        log.clear()
        world.start(device)
        world.run(for: 10)
        #expect(log.contains("desired state kept from the last run: fleet v2"), "\(log.lines.prefix(20))")
        #expect(log.contains("retrying in"), "it tried the broker: \(log.lines.prefix(20))")
        let process = try #require(device.process)
        #expect(process.reconciler.effective.streams[.accelerometer]?.rateHz == 20)
        #expect(process.reconciler.documentVersions == [.fleet: 2])
        #expect(process.source.rateHz == 20, "the sensor runs the kept rate while the broker is away")
        world.terminate(device)
        #expect(Scenario.waitForExit(world, device))

        // The operator clears the fleet layer while the device is away: the clear is a retained document, which
        // the broker hands over at the next connection.
        broker.start()
        #expect(tool.waitUntil(timeout: 10) { tool.isConnected })
        try tool.publish("motion/fleet/desired", #"{"version": 3, "clear": true}"#, retain: true)
        world.start(device)
        #expect(
            tool.waitUntil(timeout: 20) { log.contains("fleet desired state cleared by v3 from motion/fleet/desired") }
        )
        #expect(
            tool.waitUntil(timeout: 20) {
                tool.status("dev-new")?.state == .online && Scenario.desired(tool, "dev-new") == ["fleet": 3]
            }
        )
        #expect(Scenario.setting(tool, "dev-new", "streams.accelerometer.rate_hz") == ("5", "config.yaml"))
        #expect(tool.status("dev-new")?.streams?["accelerometer"]?.rateHz == 5)
    }

    @Test func layersCombinePerKeyAndTheLastWriterOfEachKeyWins() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        let tool = try SimulatedTool(world, clientID: "operator")
        let device = world.addDevice(
            "dev-layers",
            configuration: try Self.fleet(groups: ["lab", "floor-2"]).configuration(deviceID: "dev-layers"),
            seed: 2
        )
        world.start(device)
        #expect(tool.waitUntil(timeout: 20) { tool.status("dev-layers")?.state == .online })
        try tool.publish(
            "motion/fleet/desired",
            #"{"version": 1, "streams": {"accelerometer": {"rate_hz": 10}, "gyroscope": {"rate_hz": 10}, "magnetometer": {"rate_hz": 5}}}"#,
            retain: true
        )
        try tool.publish(
            "motion/group/lab/desired",
            #"{"version": 4, "streams": {"accelerometer": {"rate_hz": 20}, "gyroscope": {"rate_hz": 20}}}"#,
            retain: true
        )
        try tool.publish(
            "motion/group/floor-2/desired",
            #"{"version": 2, "streams": {"accelerometer": {"rate_hz": 25}}}"#,
            retain: true
        )
        try tool.publish(
            "motion/dev-layers/desired",
            #"{"version": 7, "streams": {"accelerometer": {"qos": 1}}}"#,
            retain: true
        )
        #expect(Scenario.waitFor(tool, "dev-layers", "streams.accelerometer.qos", "1"))
        #expect(Scenario.setting(tool, "dev-layers", "streams.magnetometer.rate_hz") == ("5", "fleet v1"))
        #expect(Scenario.setting(tool, "dev-layers", "streams.gyroscope.rate_hz") == ("20", "group lab v4"))
        #expect(Scenario.setting(tool, "dev-layers", "streams.accelerometer.rate_hz") == ("25", "group floor-2 v2"))
        #expect(Scenario.setting(tool, "dev-layers", "streams.accelerometer.qos") == ("1", "device v7"))
        #expect(Scenario.setting(tool, "dev-layers", "streams.accelerometer.enabled").source == "config.yaml")
        #expect(
            Scenario.desired(tool, "dev-layers") == ["fleet": 1, "group lab": 4, "group floor-2": 2, "device": 7]
        )
        // What is in force is what runs: the streams' rates and QoS.
        let streams = try #require(tool.status("dev-layers")?.streams)
        #expect(streams["accelerometer"]?.rateHz == 25 && streams["accelerometer"]?.qos == 1)
        #expect(streams["gyroscope"]?.rateHz == 20 && streams["magnetometer"]?.rateHz == 5)

        // A command sets one key on top of every layer…
        let replies = try tool.send(
            "motion/dev-layers/control",
            #"{"id": "gyro-40", "command": "set-rate", "stream": "gyroscope", "rate_hz": 40}"#
        )
        #expect(replies.map(\.code) == [200], "\(replies)")
        #expect(Scenario.waitFor(tool, "dev-layers", "streams.gyroscope.rate_hz", "40"))
        #expect(
            Scenario.setting(tool, "dev-layers", "streams.gyroscope.rate_hz").source?.hasPrefix("command gyro-40")
                == true
        )
        #expect(Scenario.setting(tool, "dev-layers", "streams.accelerometer.rate_hz") == ("25", "group floor-2 v2"))
        // …until a newer document changes that key: the document is the last writer.
        try tool.publish(
            "motion/group/lab/desired",
            #"{"version": 5, "streams": {"accelerometer": {"rate_hz": 20}, "gyroscope": {"rate_hz": 30}}}"#,
            retain: true
        )
        #expect(Scenario.waitFor(tool, "dev-layers", "streams.gyroscope.rate_hz", "30"))
        #expect(Scenario.setting(tool, "dev-layers", "streams.gyroscope.rate_hz").source == "group lab v5")
        #expect(Scenario.setting(tool, "dev-layers", "streams.accelerometer.rate_hz") == ("25", "group floor-2 v2"))
    }

    /// A burst of refused documents beyond the refusals' budget (a burst of 5, then 2 a second) does not become a
    /// status each, yet the status ends on the last of them: its report, held back, follows once the budget has
    /// a token again (the agent waits for that only while a report is owed: no timer while idle). On virtual
    /// time the count is exact: five reports from the burst, then the owed one half a second later.
    @Test func theLastOfARefusedBurstReachesTheStatusOnceTheBudgetRefills() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        let statusTopic = "motion/dev-burst/status"
        let tool = try SimulatedTool(world, clientID: "operator", subscribe: [statusTopic])
        let device = world.addDevice(
            "dev-burst",
            configuration: try Self.fleet().configuration(deviceID: "dev-burst"),
            seed: 3
        )
        world.start(device)
        #expect(tool.waitUntil(timeout: 20) { tool.status("dev-burst")?.state == .online })
        world.run(for: 5)
        let before = tool.messages(on: statusTopic).count
        for index in 1...12 {
            let document = Array(#"{"version": \#(index), "streams": {"nonsense-\#(index)": {}}}"#.utf8)
            _ = try document.withUnsafeBytes {
                try tool.client.publish(topic: "motion/dev-burst/desired", payload: $0, qos: 1, retain: true)
            }
        }
        let sent = world.now
        func refusal(_ status: [String: Any]) -> String? {
            ((status["configuration"] as? [String: Any])?["refused"] as? [String: Any])?["reason"] as? String
        }
        #expect(
            tool.waitUntil(timeout: 20) {
                tool.json(on: statusTopic).last.flatMap(refusal)?.contains("nonsense-12") == true
            }
        )
        let reportedAt = world.now
        world.run(for: 10)
        let reports = tool.json(on: statusTopic).dropFirst(before).map { refusal($0) ?? "-" }
        // The burst's five tokens report the first five; the last document's report is owed and follows once a
        // token refilled (2 a second: 0.5 s), never the six between.
        #expect(reports.count == 6, "\(reports.count) statuses for 12 refused documents: \(reports)")
        for (index, expected) in [1, 2, 3, 4, 5, 12].enumerated() where index < reports.count {
            #expect(reports[index].contains("nonsense-\(expected)\""), "report \(index): \(reports[index])")
        }
        #expect(reportedAt - sent <= 1, "the owed report took \(reportedAt - sent) s")
    }

    @Test func badAndOlderDocumentsAreRefusedAndReportedAndOnlyAClearRemovesTheLayer() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        let tool = try SimulatedTool(world, clientID: "operator")
        let log = ControlLogRecorder()
        let device = world.addDevice(
            "dev-refuse",
            configuration: try Self.fleet().configuration(deviceID: "dev-refuse"),
            seed: 4,
            log: log
        )
        world.start(device)
        #expect(tool.waitUntil(timeout: 20) { tool.status("dev-refuse")?.state == .online })
        let topic = "motion/dev-refuse/desired"
        try tool.publish(topic, #"{"version": 3, "streams": {"gyroscope": {"rate_hz": 10}}}"#, retain: true)
        #expect(Scenario.waitFor(tool, "dev-refuse", "streams.gyroscope.rate_hz", "10"))

        // Out of range: refused whole (the valid key in it too), reported with the config schema's words.
        try tool.publish(
            topic,
            #"{"version": 4, "streams": {"gyroscope": {"rate_hz": 5000}, "magnetometer": {"rate_hz": 2}}}"#,
            retain: true
        )
        #expect(tool.waitUntil(timeout: 20) { tool.status("dev-refuse")?.configuration?.refused != nil })
        let refused = try #require(tool.status("dev-refuse")?.configuration?.refused)
        #expect(refused.layer == "device")
        #expect(refused.reason.contains("streams.gyroscope.rate_hz"), "\(refused.reason)")
        #expect(refused.reason.contains("5000 is out of range"), "\(refused.reason)")
        #expect(Scenario.setting(tool, "dev-refuse", "streams.gyroscope.rate_hz") == ("10", "device v3"))
        #expect(Scenario.setting(tool, "dev-refuse", "streams.magnetometer.rate_hz") == ("5", "config.yaml"))
        #expect(Scenario.desired(tool, "dev-refuse") == ["device": 3])
        #expect(tool.status("dev-refuse")?.streams?["gyroscope"]?.rateHz == 10)

        // Older than the one in force: ignored and reported, and v3 stays.
        try tool.publish(topic, #"{"version": 2, "streams": {"gyroscope": {"rate_hz": 2}}}"#, retain: true)
        #expect(tool.waitUntil(timeout: 20) { tool.status("dev-refuse")?.configuration?.ignored != nil })
        let ignored = try #require(tool.status("dev-refuse")?.configuration?.ignored)
        #expect(ignored.layer == "device")
        #expect(ignored.version == 2)
        #expect(ignored.reason.contains("older than v3 in force"), "\(ignored.reason)")
        #expect(Scenario.setting(tool, "dev-refuse", "streams.gyroscope.rate_hz") == ("10", "device v3"))
        #expect(Scenario.desired(tool, "dev-refuse") == ["device": 3])

        // An empty retained payload is not a clear: the layer stays. A clear document removes it: config.yaml's
        // value again, and the clear's version in force.
        try tool.publish(topic, [UInt8](), retain: true)
        world.run(for: 1)
        #expect(log.contains("an empty retained payload on \(topic) leaves the device layer as it is"))
        #expect(Scenario.setting(tool, "dev-refuse", "streams.gyroscope.rate_hz") == ("10", "device v3"))
        #expect(Scenario.desired(tool, "dev-refuse") == ["device": 3])
        try tool.publish(topic, #"{"version": 4, "clear": true}"#, retain: true)
        #expect(Scenario.waitFor(tool, "dev-refuse", "streams.gyroscope.rate_hz", "5"))
        #expect(Scenario.setting(tool, "dev-refuse", "streams.gyroscope.rate_hz").source == "config.yaml")
        #expect(Scenario.desired(tool, "dev-refuse") == ["device": 4])
        #expect(tool.status("dev-refuse")?.streams?["gyroscope"]?.rateHz == 5)
    }

    /// With the operators' keys (control.trusted_keys_file), a desired document must be signed like a command: an
    /// unsigned one is refused whole and reported, the version in force stays, and the next signed version
    /// applies over the refused one (whose version was never taken). The operator tool's side — `fleet set
    /// --signing-key` refusing to build on the refused document without `--replace` — stays end to end.
    @Test func anUnsignedDocumentIsRefusedWhenSigningIsOnAndASignedOneApplies() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        let tool = try SimulatedTool(world, clientID: "operator")
        let signer = ControlSigner(key: Scenario.operatorKey, clock: world.clock)
        let device = world.addDevice(
            "dev-signed",
            configuration: try Self.fleet().configuration(deviceID: "dev-signed"),
            trustedKeys: Scenario.trust,
            seed: 5
        )
        world.start(device)
        #expect(tool.waitUntil(timeout: 20) { tool.status("dev-signed")?.state == .online })
        let topic = "motion/dev-signed/desired"
        let v1 = try #require(
            signer.document(#"{"version": 1, "streams": {"gyroscope": {"rate_hz": 10}}}"#, layer: .device, topic: topic)
        )
        try tool.publish(topic, v1, retain: true)
        #expect(Scenario.waitFor(tool, "dev-signed", "streams.gyroscope.rate_hz", "10"))
        #expect(Scenario.setting(tool, "dev-signed", "streams.gyroscope.rate_hz").source == "device v1")

        // Unsigned, with a higher version: refused whole, with the reason, and v1 stays in force.
        try tool.publish(topic, #"{"version": 2, "streams": {"gyroscope": {"rate_hz": 2}}}"#, retain: true)
        #expect(tool.waitUntil(timeout: 20) { tool.status("dev-signed")?.configuration?.refused != nil })
        let refused = try #require(tool.status("dev-signed")?.configuration?.refused)
        #expect(refused.layer == "device")
        #expect(refused.reason.contains("is not signed"), "\(refused)")
        #expect(Scenario.setting(tool, "dev-signed", "streams.gyroscope.rate_hz") == ("10", "device v1"))
        #expect(Scenario.desired(tool, "dev-signed") == ["device": 1])
        #expect(tool.status("dev-signed")?.streams?["gyroscope"]?.rateHz == 10)

        // Signed, the next version: applies over the refused one (its 2 was never taken as a version).
        let v2 = try #require(
            signer.document(#"{"version": 2, "streams": {"gyroscope": {"rate_hz": 20}}}"#, layer: .device, topic: topic)
        )
        try tool.publish(topic, v2, retain: true)
        #expect(Scenario.waitFor(tool, "dev-signed", "streams.gyroscope.rate_hz", "20"))
        #expect(Scenario.setting(tool, "dev-signed", "streams.gyroscope.rate_hz").source == "device v2")
        #expect(Scenario.desired(tool, "dev-signed") == ["device": 2])
    }

    /// Round one's trap: one command pinned every stream over config.yaml for good. Now a command pins only the key
    /// it names; a config.yaml edit of any other key applies after a reload (`reload-config`, the door SIGHUP goes
    /// through too — the signal itself is tested end to end) and after a restart.
    @Test func aConfigEditOfAKeyNoLayerAboveSetsAppliesAfterAReloadAndAfterARestart() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        let tool = try SimulatedTool(world, clientID: "operator")
        var fleet = Self.fleet()
        let path = try Scenario.configurationFile(fleet.yaml(deviceID: "dev-trap"))
        let device = world.addDevice(
            "dev-trap",
            configuration: try fleet.configuration(deviceID: "dev-trap"),
            seed: 6
        )
        device.configurationPath = path
        world.start(device)
        #expect(tool.waitUntil(timeout: 20) { tool.status("dev-trap")?.state == .online })
        let setRate = try tool.send(
            "motion/dev-trap/control",
            #"{"id": "acc-10", "command": "set-rate", "stream": "accelerometer", "rate_hz": 10}"#
        )
        #expect(setRate.map(\.code) == [200], "\(setRate)")
        #expect(Scenario.waitFor(tool, "dev-trap", "streams.accelerometer.rate_hz", "10"))

        // config.yaml edited: the gyroscope at 2 Hz, and reloaded.
        fleet.streams[1].rateHz = 2
        try fleet.yaml(deviceID: "dev-trap").write(toFile: path, atomically: true, encoding: .utf8)
        let reload = try tool.send("motion/dev-trap/control", #"{"id": "reload-1", "command": "reload-config"}"#)
        #expect(reload.map(\.code) == [200], "\(reload)")
        #expect(Scenario.waitFor(tool, "dev-trap", "streams.gyroscope.rate_hz", "2"))
        #expect(Scenario.setting(tool, "dev-trap", "streams.gyroscope.rate_hz").source == "config.yaml")
        #expect(Scenario.setting(tool, "dev-trap", "streams.accelerometer.rate_hz").value == "10")
        #expect(tool.status("dev-trap")?.streams?["gyroscope"]?.rateHz == 2)

        // Edited again while the agent is stopped: the restart reads it, and the command's key stays pinned.
        fleet.streams[1].rateHz = 1
        try fleet.yaml(deviceID: "dev-trap").write(toFile: path, atomically: true, encoding: .utf8)
        world.terminate(device)
        #expect(Scenario.waitForExit(world, device))
        let restarted = world.addDevice(device, editedConfiguration: try fleet.configuration(deviceID: "dev-trap"))
        world.start(restarted)
        #expect(Scenario.waitFor(tool, "dev-trap", "streams.gyroscope.rate_hz", "1"))
        #expect(Scenario.setting(tool, "dev-trap", "streams.gyroscope.rate_hz") == ("1", "config.yaml"))
        #expect(Scenario.setting(tool, "dev-trap", "streams.accelerometer.rate_hz").value == "10")
        #expect(
            Scenario.setting(tool, "dev-trap", "streams.accelerometer.rate_hz").source?.hasPrefix("command acc-10")
                == true
        )
        let streams = try #require(tool.status("dev-trap")?.streams)
        #expect(streams["gyroscope"]?.rateHz == 1 && streams["accelerometer"]?.rateHz == 10)
    }
}
