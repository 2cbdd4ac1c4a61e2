import AgentConfig
import AgentPipeline
import AgentPorts
import Foundation
import MotionEstimation
import MotionModel
import MotionWire
import Simulation
import Testing

/// The device-motion stream's payload and conventions, on the simulator's ground truth.
@Suite struct DeviceMotionStreamTests {
    /// Runs `seconds` of a scenario at 100 Hz through a device-motion stream; returns the decoded messages.
    private func run(
        _ scenario: SimulationScenario,
        seconds: Double,
        frame: AttitudeReferenceFrame,
        usability: WorldMagneticModel.HeadingUsability? = nil,
        rateHz: Double = 50
    ) throws -> [[String: Any]] {
        let outbox = Outbox(capacityBytes: 64 << 20, capacityMessages: 1 << 20)
        let hub = SensorHub(outbox: outbox)
        let stream = DeviceMotionStream(
            settings: StreamSettings(enabled: true, rateHz: rateHz, qos: 0, retain: false),
            referenceFrame: frame,
            declinationDegrees: 0
        )
        stream.expectedHeadingUsability = usability
        stream.configure(
            settings: stream.settings,
            sensorRatesHz: [.accelerometer: 100, .gyroscope: 100, .magnetometer: 100],
            topicID: 0
        )
        hub.setStreams([stream])
        let imu = SimulatedIMU(scenario: scenario, seed: 11, errors: .ideal)
        for (sample, _) in SimulatedRecording(imu: imu, rateHz: 100, duration: seconds) { hub.ingest(sample) }
        var out: [[String: Any]] = []
        while outbox.withOldest(
            timeout: 0,
            { m in
                out.append((try? JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any]) ?? [:])
                return .published
            }
        ) {}
        return out
    }

    private func vector(_ o: [String: Any]?, _ key: String) -> Vector3? {
        guard let v = o?[key] as? [String: Double], let x = v["x"], let y = v["y"], let z = v["z"] else { return nil }
        return Vector3(x, y, z)
    }

    @Test func aDeviceFaceUpAtRestHasCoreMotionsGravityAndNoUserAcceleration() throws {
        let messages = try run(.stationary, seconds: 5, frame: .xArbitraryZVertical)
        #expect(abs(messages.count - 250) <= 2, "50 Hz published from 100 Hz estimation: \(messages.count)")
        let last = try #require(messages.last)
        let gravity = try #require(vector(last, "gravity"))
        let user = try #require(vector(last, "userAcceleration"))
        #expect(gravity.norm > 0.99 && gravity.norm < 1.01)
        #expect(gravity.z < -0.99, "face up: gravity (0, 0, −1), got \(gravity)")
        #expect(user.norm < 0.01)
        #expect(last["heading"] as? Double == -1, "no heading in an arbitrary frame")
        #expect(last["referenceFrame"] as? String == "xArbitraryZVertical")
        let attitude = try #require(last["attitude"] as? [String: Any])
        let q = try #require(attitude["quaternion"] as? [String: Double])
        #expect(abs((q["w"]! * q["w"]! + q["x"]! * q["x"]! + q["y"]! * q["y"]! + q["z"]! * q["z"]!) - 1) < 1e-5)
        #expect(abs(attitude["yaw"] as! Double) < 0.01, "yaw 0 at start in xArbitraryZVertical")
        let m = try #require(attitude["rotationMatrix"] as? [String: Double])
        #expect(m.count == 9)
        let seqs = messages.compactMap { $0["seq"] as? Int }
        #expect(seqs == Array(1...messages.count))
    }

    @Test func headingIsWithheldWhereTheHorizontalFieldIsUnusableAndDowngradedWhereWeak() throws {
        let unusable = try run(.stationary, seconds: 3, frame: .xMagneticNorthZVertical, usability: .unusable)
        #expect(unusable.allSatisfy { $0["heading"] as? Double == -1 })
        let normal = try run(.stationary, seconds: 3, frame: .xMagneticNorthZVertical, usability: .normal)
        let heading = try #require(normal.last?["heading"] as? Double)
        #expect(heading >= 0 && heading < 360)
        let degraded = try run(.rotating, seconds: 40, frame: .xMagneticNorthZVertical, usability: .degraded)
        let accuracies = Set(degraded.compactMap { ($0["magneticField"] as? [String: Any])?["accuracy"] as? String })
        #expect(!accuracies.contains("medium") && !accuracies.contains("high"), "\(accuracies)")
    }
}
