import AgentConfig
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionEstimation
import MotionModel
import MotionWire
import Simulation
import Testing

/// Device motion's `relativeAttitude` on the simulator's ground truth: a reference captured at a known pose,
/// then every published relative attitude against the true relative rotation reference⁻¹ ⊗ attitude.
@Suite struct RelativeAttitudeSimulationTests {
    struct Run {
        /// Decoded messages, in order.
        var messages: [[String: Any]]
        /// True device → world attitude at each sample timestamp.
        var truth: [Double: Quaternion]
        /// True attitude when the reference was captured.
        var truthAtCapture: Quaternion
        var captureTimestamp: Double
    }

    /// Runs the rotating scenario at 100 Hz through device motion in `frame`, capturing the reference (as
    /// `set-reference-attitude` does: the stream's latest attitude) at `captureAt` seconds.
    private func run(frame: AttitudeReferenceFrame, seconds: Double = 40, captureAt: Double = 15) -> Run {
        let outbox = Outbox(capacityBytes: 64 << 20, capacityMessages: 1 << 20)
        let hub = SensorHub(outbox: outbox)
        let stream = DeviceMotionStream(
            settings: StreamSettings(enabled: true, rateHz: 25, qos: 0, retain: false),
            referenceFrame: frame,
            declinationDegrees: 0
        )
        stream.configure(
            settings: stream.settings,
            sensorRatesHz: [.accelerometer: 100, .gyroscope: 100, .magnetometer: 100],
            topicID: 0
        )
        hub.setStreams([stream])
        let imu = SimulatedIMU(scenario: .rotating, seed: 5, errors: .ideal)
        var truth: [Double: Quaternion] = [:]
        var truthAtCapture = Quaternion.identity
        var captureTimestamp = 0.0
        for (sample, state) in SimulatedRecording(imu: imu, rateHz: 100, duration: seconds) {
            hub.ingest(sample)
            truth[sample.timestamp] = state.attitude
            if stream.referenceAttitude == nil, state.time >= captureAt, let latest = stream.latestAttitude {
                hub.withStreams { _ in stream.referenceAttitude = ReferenceAttitude(quaternion: latest, time: 1234.5) }
                truthAtCapture = state.attitude
                captureTimestamp = sample.timestamp
            }
        }
        var messages: [[String: Any]] = []
        while outbox.withOldest(
            timeout: 0,
            { m in
                messages.append((try? JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any]) ?? [:])
                return .published
            }
        ) {}
        return Run(messages: messages, truth: truth, truthAtCapture: truthAtCapture, captureTimestamp: captureTimestamp)
    }

    private func quaternion(_ attitude: Any?) -> Quaternion? {
        guard let a = attitude as? [String: Any], let q = a["quaternion"] as? [String: Double] else { return nil }
        return Quaternion(w: q["w"]!, x: q["x"]!, y: q["y"]!, z: q["z"]!)
    }

    @Test(arguments: [AttitudeReferenceFrame.xArbitraryZVertical, .xMagneticNorthZVertical])
    func theRelativeAttitudeFollowsTheTrueRotationSinceTheReference(frame: AttitudeReferenceFrame) throws {
        let r = run(frame: frame)
        let before = r.messages.filter { ($0["timestamp"] as? Double ?? 0) <= r.captureTimestamp }
        let after = r.messages.filter { ($0["timestamp"] as? Double ?? 0) > r.captureTimestamp }
        #expect(before.count > 300 && after.count > 500, "\(before.count) before, \(after.count) after")
        #expect(before.allSatisfy { $0["relativeAttitude"] == nil }, "no reference yet: absolute attitude only")
        var worst = 0.0
        var worstOtherOrder = 0.0
        var turned = 0.0
        for message in after {
            let timestamp = try #require(message["timestamp"] as? Double)
            let relative = try #require(quaternion(message["relativeAttitude"]), "relativeAttitude at \(timestamp)")
            #expect((message["relativeAttitude"] as? [String: Any])?["referenceTime"] as? Double == 1234.5)
            // `attitude` stays absolute beside it.
            #expect(quaternion(message["attitude"]) != nil)
            let now = try #require(r.truth[timestamp])
            let expected = now.multiplied(byInverseOf: r.truthAtCapture)
            worst = max(worst, relative.angle(to: expected))
            worstOtherOrder = max(worstOtherOrder, relative.angle(to: now * r.truthAtCapture.conjugate))
            turned = max(turned, expected.angle(to: .identity))
        }
        let degree = Double.pi / 180
        #expect(turned > 60 * degree, "the scenario must turn the device well away from the reference")
        #expect(worst < 3 * degree, "worst relative-attitude error \(worst / degree)° in \(frame)")
        #expect(worstOtherOrder > 10 * degree, "the truth must tell the multiplication orders apart")
    }

    @Test func relativeAttitudeIsTheSameInTheArbitraryAndTheNorthFrames() throws {
        // The frames differ by a turn about the vertical, which cancels between reference and attitude.
        let arbitrary = run(frame: .xArbitraryZVertical)
        let north = run(frame: .xMagneticNorthZVertical)
        var worst = 0.0
        for (a, n) in zip(arbitrary.messages, north.messages) {
            guard let qa = quaternion(a["relativeAttitude"]), let qn = quaternion(n["relativeAttitude"]) else {
                continue
            }
            worst = max(worst, qa.angle(to: qn))
        }
        #expect(worst < 3 * Double.pi / 180, "\(worst * 180 / .pi)°")
    }
}

/// `motion-agent process` runs the estimators over a recording with config.yaml's reference attitude too.
@Suite struct OfflineRelativeAttitudeTests {
    @Test func processingWithAReferenceInTheConfigurationPublishesRelativeAttitude() throws {
        var configuration = AgentConfiguration()
        let reference = Quaternion(roll: 0, pitch: 0, yaw: 0.5)
        configuration.deviceMotion.referenceAttitude = reference
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let samples = (0..<200).map { i in
            IMUSample(
                timestamp: Double(i) / 100,
                acceleration: Vector3(0, 0, -1),
                rotationRate: Vector3(0, 0, 0),
                magneticField: Vector3(20, 0, -40)
            )
        }
        let path = NSTemporaryDirectory() + "offline-relative-\(UUID().uuidString).jsonl"
        FileManager.default.createFile(atPath: path, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let handle = try #require(FileHandle(forWritingAtPath: path))
        _ = try OfflineProcessor(configuration: configuration, referenceFrame: nil, logger: logger).run(
            samples: samples,
            sensors: [.accelerometer, .gyroscope, .magnetometer],
            fastestRateHz: 100,
            output: handle
        )
        try handle.close()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let motions = lines.compactMap { line -> [String: Any]? in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["stream"] as? String == "device-motion" ? object?["message"] as? [String: Any] : nil
        }
        #expect(motions.count > 100)
        // Lying still and level in xArbitraryZVertical (yaw 0 at start): relative yaw is −0.5 rad.
        let last = try #require(motions.last?["relativeAttitude"] as? [String: Any])
        #expect(abs((last["yaw"] as? Double ?? 0) + 0.5) < 0.01, "\(last)")
    }
}
