import Foundation
import Harness
import SparkplugB
import TestSupport
import Testing

/// The real `motion-agent` binary with `sparkplug.enabled: true` (simulated IMU) on a real mosquitto, read by the
/// independent Sparkplug host (pysparkplug): what `SparkplugHostEndToEndTests` shows for the state machine's
/// driver, shown again for the agent itself — its streams, its second connection, its state directory and its
/// control door. The primary host's handling (going offline and back, a broker outage with a primary host) and a
/// DCMD through the control door run in the simulation (SparkplugPrimaryHostSimulationTests): the logic, with the
/// production agent's Sparkplug service.
@Suite(.timeLimit(.minutes(5)), .serialized) struct SparkplugAgentEndToEndTests {
    /// The agent, started on `directory` (kept between runs for the restart test).
    final class Agent: Sendable {
        let runner: ProcessRunner

        /// The binary SwiftPM built next to this test bundle.
        static var executable: String {
            let exe =
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
            return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("motion-agent").path
        }

        init(directory: String, port: Int, sparkplug: String, mqtt: String = "") throws {
            let config = """
                device:
                  id: imu-7
                agent:
                  state_dir: state
                  log_level: info
                source:
                  kind: simulated
                  simulated:
                    scenario: walking
                    seed: 7
                    rate_hz: 100
                mqtt:
                  host: 127.0.0.1
                  port: \(port)
                  keepalive: 5
                  reconnect_min_delay: 0.2
                  reconnect_max_delay: 1
                \(mqtt)
                streams:
                  accelerometer:
                    enabled: true
                    rate_hz: 10
                sparkplug:
                  enabled: true
                  group_id: plant
                  streams: [accelerometer, device-motion, activity]
                \(sparkplug)
                """
            let path = directory + "/config.yaml"
            try config.write(toFile: path, atomically: true, encoding: .utf8)
            guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
                throw HostError("\(Self.executable) is missing: build it first (swift build --build-tests)")
            }
            runner = ProcessRunner(
                executable: Self.executable,
                arguments: ["run", "--config", path],
                workingDirectory: directory
            )
            try runner.start()
        }

        deinit {
            if runner.isRunning { runner.kill() }
        }

        var log: String { runner.standardError + runner.standardOutput }
    }

    private func directory() throws -> String {
        let path = NSTemporaryDirectory() + "sparkplug-agent-e2e-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func count(_ records: [[String: Any]], _ type: String, device: String? = nil) -> Int {
        records.filter { $0["type"] as? String == type && (device == nil || $0["device"] as? String == device) }.count
    }

    @Test func theAgentsBirthsAndDataDecodeWithNamesUnitsAndTimesAndADCMDIsRefusedWhileWritesAreOff() async throws {
        try await MosquittoBroker.withStarted { broker in
            let dir = try directory()
            let host = try SparkplugHostProcess(port: broker.port, group: "plant", directory: dir)
            try await host.start()
            let agent = try Agent(directory: dir, port: broker.port, sparkplug: "")
            try await host.waitFor("the agent's births") { count($0, "DBIRTH") == 3 }
            let nbirth = try #require(host.records("NBIRTH").first)
            #expect(nbirth["seq"] as? Int == 0 && nbirth["bdSeq"] as? Int == 0 && nbirth["node"] as? String == "imu-7")
            let dbirth = try #require(host.records("DBIRTH", device: "accelerometer").first)
            #expect(dbirth.metric("acceleration/z")?["unit"] as? String == "g")
            #expect(dbirth.metric("config/rateHz")?["value"] as? Double == 10)
            let motionBirth = try #require(host.records("DBIRTH", device: "device-motion").first)
            #expect(motionBirth.metric("rotationRate/x")?["unit"] as? String == "rad/s")
            #expect(motionBirth.metric("attitude/quaternion/w")?["datatype"] as? String == "FLOAT")

            try await host.waitFor("device-motion and accelerometer data") { records in
                count(records, "DDATA", device: "device-motion") >= 10
                    && count(records, "DDATA", device: "accelerometer") >= 5
            }
            // Resolved from aliases alone, in the units of the birth, stamped with when the sample was measured.
            let now = Int(Date().timeIntervalSince1970 * 1000)
            let live = host.records("DDATA", device: "device-motion").filter {
                $0.metrics.contains { $0["historical"] as? Bool == false }
            }
            let gravity = try #require(live.last { $0.metric("gravity/z") != nil }?.metric("gravity/z"))
            #expect(gravity["unit"] as? String == "g")
            let value = try #require(gravity["value"] as? Double)
            #expect(value > -1.2 && value < -0.5, "the simulated walker's gravity, face up-ish: \(value)")
            let stamp = try #require(gravity["timestamp"] as? Int)
            #expect(abs(stamp - now) < 10_000, "measured \(now - stamp) ms ago")

            // Writes are off: refused, and the node says why in its NDATA.
            try host.send(#"{"write": ["imu-7", "accelerometer", "config/rateHz", 5.0]}"#)
            try await host.waitFor("the refusal") { records in
                records.contains {
                    $0["type"] as? String == "NDATA" && $0.metric("Commands/Refused")?["value"] as? Int == 1
                }
            }
            let refusal = host.records("NDATA").last { $0.metric("Commands/Last Refusal") != nil }
            #expect(
                (refusal?.metric("Commands/Last Refusal")?["value"] as? String)?.contains("sparkplug.writes") == true
            )

            // A rebirth request: NBIRTH with seq 0 and the same bdSeq, then every DBIRTH again.
            try host.send(#"{"rebirth": "imu-7"}"#)
            try await host.waitFor("the rebirth") { count($0, "NBIRTH") == 2 && count($0, "DBIRTH") == 6 }
            #expect(host.records("NBIRTH").last?["bdSeq"] as? Int == 0)

            // SIGTERM: the agent's goodbye is its NDEATH, matching the birth.
            agent.runner.terminate()
            // The agent's own NDEATH before it disconnects, and the broker may deliver the will (the same
            // NDEATH, same bdSeq) as well: hosts take either.
            try await host.waitFor("the NDEATH") { count($0, "NDEATH") >= 1 }
            #expect(host.records("NDEATH").allSatisfy { $0["matchesBirth"] as? Bool == true })
            #expect(await agent.runner.waitForExit(timeout: 15) == 0, "\(agent.log.suffix(3000))")
            #expect(host.problems.isEmpty, "\(host.problems)")
            await host.stop()
        }
    }

    @Test func afterAKillTheDeathMatchesTheBirthAndTheRestartBirthsWithTheNextBdSeq() async throws {
        try await MosquittoBroker.withStarted { broker in
            let dir = try directory()
            let host = try SparkplugHostProcess(port: broker.port, group: "plant", directory: dir)
            try await host.start()
            let first = try Agent(directory: dir, port: broker.port, sparkplug: "")
            try await host.waitFor("the first birth") { count($0, "DBIRTH") == 3 }
            first.runner.kill()
            // The broker publishes the will of the connection the kernel closed: the NDEATH of bdSeq 0.
            try await host.waitFor("the NDEATH the broker published") { count($0, "NDEATH") == 1 }
            #expect(host.records("NDEATH").first?["bdSeq"] as? Int == 0)
            #expect(host.records("NDEATH").first?["matchesBirth"] as? Bool == true)
            _ = await first.runner.waitForExit(timeout: 5)

            let second = try Agent(directory: dir, port: broker.port, sparkplug: "")
            try await host.waitFor("the second birth") { count($0, "NBIRTH") == 2 && count($0, "DBIRTH") == 6 }
            #expect(host.records("NBIRTH").map { $0["bdSeq"] as? Int } == [0, 1], "persisted, then one more")
            second.runner.terminate()
            try await host.waitFor("the second NDEATH") { count($0, "NDEATH") == 2 }
            #expect(host.records("NDEATH").last?["bdSeq"] as? Int == 1)
            _ = await second.runner.waitForExit(timeout: 15)
            #expect(host.problems.isEmpty, "\(host.problems)")
            await host.stop()
        }
    }

    /// The shipped ACL (Deploy/mosquitto/acl) with its Sparkplug template filled in for this device, on a broker
    /// that binds client ids to accounts as the shipped one does: the agent's two connections (two accounts) live
    /// side by side, its births, data and will pass, the host's commands reach it — and neither of the device's
    /// accounts can command it (a rebirth published with either changes nothing).
    @Test func theShippedACLTemplateCarriesSparkplugAndOnlyTheHostCommands() async throws {
        let dir = try directory()
        let shipped = try String(
            contentsOfFile: SparkplugHostProcess.repository + "/Deploy/mosquitto/acl",
            encoding: .utf8
        ).split(separator: "\n").map(String.init)
        var acl = shipped.filter { !$0.hasPrefix("#") }
        for user in ["imu-17-sparkplug", "scada"] {
            let start = try #require(shipped.firstIndex(of: "# user \(user)"), "the template of \(user)")
            acl.append(String(shipped[start].dropFirst(2)))
            acl += shipped[(start + 1)...].prefix { $0.hasPrefix("# topic ") }.map { String($0.dropFirst(2)) }
        }
        // A second host account from the same template (a console beside the SCADA host), for the control below.
        let hostStart = try #require(shipped.firstIndex(of: "# user scada"))
        acl.append("user console")
        acl += shipped[(hostStart + 1)...].prefix { $0.hasPrefix("# topic ") }.map { String($0.dropFirst(2)) }
        let filled = acl.joined(separator: "\n")
            .replacingOccurrences(of: "imu-17", with: "imu-7")
            .replacingOccurrences(of: "spBv1.0/motion/", with: "spBv1.0/plant/")
        try (filled + "\n").write(toFile: dir + "/acl", atomically: true, encoding: .utf8)
        let passwords = [
            "imu-7": "device-pw", "imu-7-sparkplug": "sparkplug-pw", "scada": "host-pw", "console": "console-pw",
        ]
        for (user, password) in passwords {
            try (password + "\n").write(toFile: "\(dir)/\(user).password", atomically: true, encoding: .utf8)
            // The agent refuses a password file others may read (issue 27).
            chmod("\(dir)/\(user).password", 0o600)
        }
        let options = MosquittoBroker.Options(
            allowAnonymous: false,
            users: passwords,
            extraConfiguration: ["use_username_as_clientid true", "acl_file \(dir)/acl"]
        )
        try await MosquittoBroker.withStarted(options: options) { broker in
            let host = try SparkplugHostProcess(
                port: broker.port,
                group: "plant",
                primaryHostID: "scada",
                account: ("scada", "\(dir)/scada.password"),
                directory: dir
            )
            try await host.start()
            let agent = try Agent(
                directory: dir,
                port: broker.port,
                sparkplug: """
                      primary_host_id: scada
                      username: imu-7-sparkplug
                      password_file: \(dir)/imu-7-sparkplug.password
                    """,
                mqtt: "  username: imu-7\n  password_file: \(dir)/imu-7.password"
            )
            try await host.waitFor("the births through the ACL") { count($0, "DBIRTH") == 3 && count($0, "DDATA") >= 5 }

            // A rebirth request published with the device's native account, then with its Sparkplug account.
            var rebirth = SparkplugPayload()
            var metric = SparkplugPayload.Metric()
            metric.name = "Node Control/Rebirth"
            metric.datatype = 11
            metric.booleanValue = true
            rebirth.metrics = [metric]
            rebirth.timestamp = UInt64(Date().timeIntervalSince1970 * 1000)
            let payload = dir + "/rebirth.bin"
            try Data(try rebirth.serializedBytes() as [UInt8]).write(to: URL(fileURLWithPath: payload))
            func publishRebirth(as user: String) async throws {
                let publish = ProcessRunner(
                    executable: "/usr/bin/mosquitto_pub",
                    arguments: [
                        "-h", "127.0.0.1", "-p", String(broker.port), "-u", user, "-P", passwords[user]!,
                        "-q", "1", "-t", "spBv1.0/plant/NCMD/imu-7", "-f", payload,
                    ]
                )
                try publish.start()
                _ = await publish.waitForExit(timeout: 10)
            }
            try await publishRebirth(as: "imu-7")
            try await publishRebirth(as: "imu-7-sparkplug")
            try await Task.sleep(for: .seconds(2))
            // Publishing as the Sparkplug account takes its client id (the broker binds it to the account), so the
            // agent's Sparkplug session ends and a new one is born with the next bdSeq; a rebirth obeyed would
            // have repeated the bdSeq instead.
            let births = host.records("NBIRTH").compactMap { $0["bdSeq"] as? Int }
            #expect(Set(births).count == births.count, "a device account commanded a rebirth: bdSeqs \(births)")
            // The same bytes from a host's account are obeyed: an NBIRTH with the same bdSeq.
            try await publishRebirth(as: "console")
            try await host.waitFor("the host's rebirth") { records in
                let seqs = records.filter { $0["type"] as? String == "NBIRTH" }.compactMap { $0["bdSeq"] as? Int }
                return seqs.count >= 2 && seqs.last == seqs.dropLast().last
            }
            try host.send(#"{"write": ["imu-7", "accelerometer", "config/rateHz", 5.0]}"#)
            try await host.waitFor("the refusal in NDATA") {
                $0.contains { $0["type"] as? String == "NDATA" && $0.metric("Commands/Refused")?["value"] as? Int == 1 }
            }
            // The will passes the ACL too.
            let before = count(host.records, "NDEATH")
            agent.runner.kill()
            try await host.waitFor("the NDEATH") { count($0, "NDEATH") == before + 1 }
            #expect(host.records("NDEATH").last?["matchesBirth"] as? Bool == true)
            #expect(!agent.log.contains("not authori"), "\(agent.log.suffix(3000))")
            #expect(host.problems.isEmpty, "\(host.problems)")
            await host.stop()
        }
    }
}
