import Foundation
import MotionModel
import TestSupport
import Testing

/// Relative attitude through a real broker and the real agent: `set-reference-attitude` → its reply →
/// `relativeAttitude` in the device-motion messages beside the absolute `attitude` → `clear-reference-attitude`
/// → gone; and a reference set before a restart is still in force, with its capture time, after it.
@Suite(.timeLimit(.minutes(10)), .serialized) struct RelativeAttitudeEndToEndTests {
    private func quaternion(_ attitude: Any?) -> Quaternion? {
        guard let a = attitude as? [String: Any], let q = a["quaternion"] as? [String: Double] else { return nil }
        return Quaternion(w: q["w"]!, x: q["x"]!, y: q["y"]!, z: q["z"]!)
    }

    private func deviceMotion(_ subscriber: CapturingSubscriber, device: String, after mark: Int) -> [[String: Any]] {
        subscriber.messages.dropFirst(mark).filter { $0.topic == "motion/\(device)/device-motion" }.map(payloadJSON)
    }

    @Test func setPublishClearAndRestart() async throws {
        let device = "e2e-relative"
        let broker = try await MosquittoBroker.started()
        let first = try AgentProcess(config: AgentProcess.config(device: device, port: broker.port))
        var firstRunning = true
        defer { if firstRunning { first.runner.kill() } }
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/\(device)/#"])
        try await subscriber.waitFor(count: 10, on: "motion/\(device)/device-motion", timeout: 30)
        #expect(
            subscriber.messages(on: "motion/\(device)/device-motion").map(payloadJSON).allSatisfy {
                $0["relativeAttitude"] == nil
            },
            "no reference: the absolute attitude only"
        )

        // A given quaternion (a turn of 90° about z): relative = given⁻¹ ⊗ attitude, message by message.
        var mark = subscriber.messages.count
        let (code, lines) = try await ControlEndToEndTests.ctl(
            broker,
            ["--device", device, "set-reference-attitude", "w=0.7071068", "x=0", "y=0", "z=0.7071068"]
        )
        #expect(code == 0, "\(lines)")
        let reply = try #require(lines.first)
        #expect(reply.hasPrefix("\(device)\tok\t200") && reply.contains("\"referenceAttitude\""), "\(reply)")
        try await subscriber.waitUntil(timeout: 10, "device motion with relativeAttitude") { [mark] messages in
            messages.dropFirst(mark).contains { m in
                m.topic == "motion/\(device)/device-motion" && payloadJSON(m)["relativeAttitude"] != nil
            }
        }
        let given = Quaternion(w: 0.7071068, x: 0, y: 0, z: 0.7071068).normalized
        let withRelative = deviceMotion(subscriber, device: device, after: mark).filter {
            $0["relativeAttitude"] != nil
        }
        for message in withRelative {
            let attitude = try #require(quaternion(message["attitude"]))
            let relative = try #require(quaternion(message["relativeAttitude"]))
            // 7 decimals on the wire: agreement to a few 1e-7 per component (compared component-wise: acos
            // in `angle(to:)` turns a 1e-7 rounding into 1e-3 rad).
            let expected = attitude.multiplied(byInverseOf: given)
            let sign =
                relative.w * expected.w + relative.x * expected.x + relative.y * expected.y
                    + relative.z * expected.z < 0 ? -1.0 : 1.0
            let difference = max(
                abs(relative.w - sign * expected.w),
                abs(relative.x - sign * expected.x),
                abs(relative.y - sign * expected.y),
                abs(relative.z - sign * expected.z)
            )
            #expect(difference < 2e-6, "\(message)")
            let r = try #require(message["relativeAttitude"] as? [String: Any])
            #expect(r["rotationMatrix"] != nil && r["roll"] != nil && r["pitch"] != nil && r["yaw"] != nil)
            #expect(r["referenceTime"] is Double)
        }
        // The status is republished after the command's reply: wait for it rather than read the last one now.
        func motionStatus() -> [String: Any]? {
            let status = subscriber.messages(on: "motion/\(device)/status").last.map(payloadJSON)
            return (status?["streams"] as? [String: Any])?["device-motion"] as? [String: Any]
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while motionStatus()?["referenceAttitude"] == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(motionStatus()?["referenceAttitude"] != nil, "the retained status shows the reference")

        // Capture: the device lies still, so right after the capture the relative attitude is the identity.
        mark = subscriber.messages.count
        let (captureCode, captureLines) = try await ControlEndToEndTests.ctl(
            broker,
            ["--device", device, "set-reference-attitude"]
        )
        #expect(captureCode == 0, "\(captureLines)")
        try await Task.sleep(for: .seconds(1))
        let captured = deviceMotion(subscriber, device: device, after: mark).suffix(10)
        #expect(!captured.isEmpty)
        for message in captured {
            let relative = try #require(quaternion(message["relativeAttitude"]))
            #expect(relative.angle(to: .identity) < 0.5 * Double.pi / 180, "\(message)")
        }
        let captureTime = try #require(
            (captured.last?["relativeAttitude"] as? [String: Any])?["referenceTime"] as? Double
        )

        // Clear: relativeAttitude is gone.
        mark = subscriber.messages.count
        let (clearCode, clearLines) = try await ControlEndToEndTests.ctl(
            broker,
            ["--device", device, "clear-reference-attitude"]
        )
        #expect(clearCode == 0, "\(clearLines)")
        try await Task.sleep(for: .seconds(1))
        let cleared = deviceMotion(subscriber, device: device, after: mark).suffix(10)
        #expect(!cleared.isEmpty && cleared.allSatisfy { $0["relativeAttitude"] == nil })

        // Set again (capture) and restart: the reference and its capture time are still in force.
        #expect(try await ControlEndToEndTests.ctl(broker, ["--device", device, "set-reference-attitude"]).0 == 0)
        // flatMap, not map: `map` made an Optional of the Optional field, non-nil for any message, so the wait
        // passed at once and under load the message read below could still predate the capture.
        try await subscriber.waitUntil(timeout: 10, "relativeAttitude again") { messages in
            messages.last { $0.topic == "motion/\(device)/device-motion" }.flatMap {
                payloadJSON($0)["relativeAttitude"]
            } != nil
        }
        let beforeRestart = try #require(
            subscriber.messages(on: "motion/\(device)/device-motion").last.map(payloadJSON)
        )
        let keptTime = try #require((beforeRestart["relativeAttitude"] as? [String: Any])?["referenceTime"] as? Double)
        #expect(keptTime >= captureTime)
        first.runner.terminate()
        _ = await first.runner.waitForExit(timeout: 15)
        firstRunning = false
        mark = subscriber.messages.count
        let second = try AgentProcess(
            config: try String(contentsOfFile: first.configPath, encoding: .utf8),
            arguments: ["run", "--config", first.configPath]
        )
        defer { second.runner.kill() }
        try await subscriber.waitUntil(timeout: 30, "device motion after the restart") { [mark] messages in
            messages.dropFirst(mark).filter { $0.topic == "motion/\(device)/device-motion" }.count >= 10
        }
        let afterRestart = deviceMotion(subscriber, device: device, after: mark)
        #expect(
            afterRestart.allSatisfy {
                ($0["relativeAttitude"] as? [String: Any])?["referenceTime"] as? Double == keptTime
            },
            "every message after the restart is relative to the kept reference, with its capture time"
        )
        let birth = try #require(
            subscriber.messages.dropFirst(mark).last {
                $0.topic == "motion/\(device)/status" && payloadJSON($0)["state"] as? String == "online"
            }.map(payloadJSON)
        )
        let reference =
            ((birth["streams"] as? [String: Any])?["device-motion"] as? [String: Any])?[
                "referenceAttitude"
            ] as? [String: Any]
        // The payload gives the time in milliseconds, the status in full.
        #expect(abs((reference?["time"] as? Double ?? 0) - keptTime) <= 0.0005, "\(String(describing: reference))")
        // A command holds it: the status's summary names it among the overrides.
        let setting =
            ((birth["configuration"] as? [String: Any])?["overrides"] as? [String: Any])?[
                "streams.device-motion.reference_attitude"
            ] as? [String: Any]
        #expect((setting?["source"] as? String)?.hasPrefix("command ") == true, "\(String(describing: setting))")
        await subscriber.close()
    }
}
