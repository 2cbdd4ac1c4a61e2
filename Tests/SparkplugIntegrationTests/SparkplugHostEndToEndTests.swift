import Foundation
import MotionModel
import SparkplugB
import TestSupport
import Testing

/// The edge node on a real mosquitto, read by an independent Sparkplug host (pysparkplug): births, data and
/// deaths decode there, aliases resolve against the births, seq has no gap, bdSeq of the death matches the
/// birth, commands are refused or applied, and data held across an outage arrives flagged historical with the
/// time it was measured. How the primary host's STATE stops and resumes publication runs in the simulation, with
/// the agent's own Sparkplug service (SparkplugPrimaryHostSimulationTests).
@Suite(.timeLimit(.minutes(5)), .serialized) struct SparkplugHostEndToEndTests {
    private func directory() throws -> String {
        let path = NSTemporaryDirectory() + "sparkplug-e2e-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func now() -> Double { Date().timeIntervalSince1970 }

    private func accelerometer(_ edge: SparkplugTestEdgeNode, _ i: Int, time: Double) {
        edge.sample("accelerometer") {
            $0.record(
                acceleration: Vector3(x: 0.001 * Double(i), y: -0.002, z: -1),
                timeMs: MotionSparkplug.milliseconds(time)
            )
        }
    }

    private func deviceMotion(_ edge: SparkplugTestEdgeNode, time: Double) {
        let motion = DeviceMotion(
            timestamp: 1,
            attitude: Quaternion(w: 0.9561155, x: 0.2834262, y: 0.0711867, z: 0.0211022),
            rotationRate: Vector3(x: 0.32, y: 0.04, z: 0.05),
            gravity: Vector3(x: 0.1241636, y: -0.5449808, z: -0.8292041),
            userAcceleration: Vector3(x: 0.01, y: 0.02, z: -0.03),
            magneticField: Vector3(x: 16, y: 8.1, z: -46.6),
            magneticFieldAccuracy: .high,
            heading: 123.456,
            referenceFrame: .xMagneticNorthZVertical,
            inclinationAccuracy: 0.412,
            headingAccuracy: 1.873
        )
        edge.sample("device-motion") { $0.record(deviceMotion: motion, timeMs: MotionSparkplug.milliseconds(time)) }
    }

    private func dataSeqs(_ host: SparkplugHostProcess) -> [Int] {
        host.records.compactMap { record in
            guard let type = record["type"] as? String, ["NBIRTH", "DBIRTH", "DDATA", "NDATA", "DDEATH"].contains(type)
            else { return nil }
            return record["seq"] as? Int
        }
    }

    @Test func birthsDataAndCommandsDecodeInAnIndependentHostWithNamesUnitsAndTimestamps() async throws {
        // Stopped also when the test throws: the driver keeps a reference to it alive.
        try await MosquittoBroker.withStarted { broker in
            let dir = try directory()
            let host = try SparkplugHostProcess(port: broker.port, group: "plant", directory: dir)
            try await host.start()
            let edge = try SparkplugTestEdgeNode(broker: broker, bdSeqFile: dir + "/bdseq")
            edge.start()
            try await host.waitFor("the DBIRTHs") { $0.filter { $0["type"] as? String == "DBIRTH" }.count == 3 }

            let nbirth = try #require(host.records("NBIRTH").first)
            #expect(nbirth["seq"] as? Int == 0 && nbirth["bdSeq"] as? Int == 0)
            #expect(nbirth.metric("Node Control/Rebirth")?["value"] as? Bool == false)
            let dbirth = try #require(host.records("DBIRTH", device: "accelerometer").first)
            let x = try #require(dbirth.metric("acceleration/x"))
            #expect(x["unit"] as? String == "g" && x["datatype"] as? String == "FLOAT" && x["alias"] as? Int != nil)
            #expect(dbirth.metric("config/rateHz")?["unit"] as? String == "Hz")

            let start = now() - 1
            for i in 1...20 { accelerometer(edge, i, time: start + Double(i) * 0.02) }
            deviceMotion(edge, time: start + 0.5)
            try await host.waitFor("20 accelerometer DDATA") { records in
                records.filter { $0["type"] as? String == "DDATA" && $0["device"] as? String == "accelerometer" }.count
                    >= 20
            }
            try await host.waitFor("the device-motion DDATA") {
                $0.contains { $0["device"] as? String == "device-motion" && $0["type"] as? String == "DDATA" }
            }
            let data = host.records("DDATA", device: "accelerometer")
            let last = try #require(data.last)
            // Resolved by the host from the alias alone (DDATA carries no names), with the sample's own time.
            let value = try #require(last.metric("acceleration/x"))
            #expect(abs((value["value"] as? Double ?? 0) - 0.020) < 1e-6)
            #expect(value["timestamp"] as? Int == Int(MotionSparkplug.milliseconds(start + 20 * 0.02)))
            #expect(value["unit"] as? String == "g" && value["historical"] as? Bool == false)
            #expect(last.metric("acceleration/z") == nil, "z did not change: reported by exception")
            let motion = try #require(host.records("DDATA", device: "device-motion").first)
            #expect(motion.metric("referenceFrame")?["value"] as? String == "xMagneticNorthZVertical")
            #expect(motion.metric("heading")?["unit"] as? String == "deg")

            // Writes are off: the DCMD is refused, and the node says why.
            try host.send(#"{"write": ["imu-7", "accelerometer", "config/rateHz", 10.0]}"#)
            try await host.waitFor("the refusal in NDATA") { records in
                records.contains {
                    $0["type"] as? String == "NDATA" && $0.metric("Commands/Refused")?["value"] as? Int == 1
                }
            }
            let refusal = try #require(host.records("NDATA").last?.metric("Commands/Last Refusal")?["value"] as? String)
            #expect(refusal.contains("writes are off"))

            // A rebirth request: NBIRTH seq 0 with the same bdSeq, every DBIRTH again.
            try host.send(#"{"rebirth": "imu-7"}"#)
            try await host.waitFor("the rebirth") { $0.filter { $0["type"] as? String == "NBIRTH" }.count == 2 }
            try await host.waitFor("the DBIRTHs after the rebirth") {
                $0.filter { $0["type"] as? String == "DBIRTH" }.count == 6
            }
            #expect(host.records("NBIRTH").last?["bdSeq"] as? Int == 0)
            accelerometer(edge, 99, time: now())
            try await host.waitFor("data after the rebirth") { $0.last { $0["type"] as? String == "DDATA" } != nil }

            await edge.stop()
            try await host.waitFor("the NDEATH") { $0.contains { $0["type"] as? String == "NDEATH" } }
            #expect(host.records("NDEATH").first?["matchesBirth"] as? Bool == true)
            #expect(host.problems.isEmpty, "\(host.problems)")
            let seqs = dataSeqs(host)
            #expect(seqs.filter { $0 == 0 }.count == 2, "one NBIRTH, one rebirth")
            await host.stop()
        }
    }

    @Test func writesTheOperatorAllowsAreAppliedAndReportedBack() async throws {
        // Stopped also when the test throws: the driver keeps a reference to it alive.
        try await MosquittoBroker.withStarted { broker in
            let dir = try directory()
            let host = try SparkplugHostProcess(port: broker.port, group: "plant", directory: dir)
            try await host.start()
            let edge = try SparkplugTestEdgeNode(broker: broker, writes: .allowed, bdSeqFile: dir + "/bdseq")
            edge.start()
            try await host.waitFor("the DBIRTHs") { $0.filter { $0["type"] as? String == "DBIRTH" }.count == 3 }
            try host.send(#"{"write": ["imu-7", "accelerometer", "config/rateHz", 10.0]}"#)
            try await host.waitFor("the new rate in DDATA") { records in
                records.contains {
                    $0["device"] as? String == "accelerometer" && $0.metric("config/rateHz")?["value"] as? Double == 10
                }
            }
            try await host.waitFor("Commands/Applied") {
                $0.contains { $0.metric("Commands/Applied")?["value"] as? Int == 1 }
            }
            // The driver's validation (the agent's control door in the agent) refuses an impossible rate.
            try host.send(#"{"write": ["imu-7", "accelerometer", "config/rateHz", -5.0]}"#)
            try await host.waitFor("the refusal") {
                $0.contains { ($0.metric("Commands/Last Refusal")?["value"] as? String)?.contains("outside") == true }
            }
            #expect(host.problems.isEmpty, "\(host.problems)")
            await edge.stop()
            await host.stop()
        }
    }

    @Test func theDeathTheBrokerPublishesMatchesTheBirthAndARestartBirthsWithTheNextBdSeq() async throws {
        // Stopped also when the test throws: the driver keeps a reference to it alive.
        try await MosquittoBroker.withStarted { broker in
            let dir = try directory()
            let host = try SparkplugHostProcess(port: broker.port, group: "plant", directory: dir)
            try await host.start()
            let first = try SparkplugTestEdgeNode(broker: broker, bdSeqFile: dir + "/bdseq")
            first.start()
            try await host.waitFor("the first birth") { $0.contains { $0["type"] as? String == "NBIRTH" } }
            // A second client with the same id takes the session over: the broker drops the first connection without
            // a DISCONNECT and publishes its will, as it would for a killed agent.
            let second = try SparkplugTestEdgeNode(broker: broker, bdSeqFile: dir + "/bdseq")
            second.start()
            try await host.waitFor("the will and the second birth") { records in
                records.contains { $0["type"] as? String == "NDEATH" }
                    && records.filter { $0["type"] as? String == "NBIRTH" }.count >= 2
            }
            let death = try #require(host.records("NDEATH").first)
            #expect(death["bdSeq"] as? Int == 0, "the will of the session whose NBIRTH said 0")
            #expect(host.records("NBIRTH").map { $0["bdSeq"] as? Int }.prefix(2) == [0, 1], "persisted, then one more")
            await second.stop()
            await first.stop()
            await host.stop()
        }
    }

    @Test func seqRunsWithoutGapsAcrossABrokerOutageAndTheHeldDataComesBackHistorical() async throws {
        // Stopped also when the test throws: the driver keeps a reference to it alive.
        try await MosquittoBroker.withStarted { broker in
            let dir = try directory()
            let edge = try SparkplugTestEdgeNode(broker: broker, bdSeqFile: dir + "/bdseq")
            edge.start()
            let host = try SparkplugHostProcess(port: broker.port, group: "plant", directory: dir)
            try await host.start()
            // The host came after the birth: data it cannot place makes it ask for one.
            accelerometer(edge, 0, time: now())
            try await host.waitFor("a birth") { $0.filter { $0["type"] as? String == "DBIRTH" }.count >= 3 }
            for i in 1...300 { accelerometer(edge, i, time: now()) }  // past 255: seq wraps
            try await host.waitFor("300 samples") { $0.filter { $0["type"] as? String == "DDATA" }.count >= 300 }

            await broker.stop()
            let outage = now()
            for i in 301...305 { accelerometer(edge, i, time: outage + Double(i - 300) * 0.01) }
            try await broker.start()
            try await host.waitFor("the birth after the outage and the held data", timeout: 30) { records in
                records.filter { $0["type"] as? String == "NBIRTH" }.count >= 2
                    && records.filter { $0.metric("acceleration/x")?["historical"] as? Bool == true }.count == 5
            }
            for i in 306...310 { accelerometer(edge, i, time: now()) }
            try await host.waitFor("live data after the outage") { records in
                records.filter {
                    $0["type"] as? String == "DDATA" && $0.metric("acceleration/x")?["historical"] as? Bool == false
                }
                .count >= 305
            }
            #expect(host.problems.isEmpty, "the host saw a seq gap or a decoding error: \(host.problems)")
            let seqs = dataSeqs(host)
            #expect(seqs.contains(255) && seqs.filter { $0 == 0 }.count >= 3, "wrapped, and a birth after the outage")
            await edge.stop()
            await host.stop()
        }
    }
}
