import AgentConfig
import AgentPipeline
import AgentPorts
import Foundation
import MotionModel
import MotionWire
import Simulation
import Testing

/// Batched streams: N samples per message, in JSON and in MotionWire's binary layout (`BinaryBatchLayout`),
/// checked byte by byte against docs/payloads.md and read back with MotionWire's decoder.
@Suite struct BatchingTests {
    private func drain(_ outbox: Outbox) -> [[UInt8]] {
        var out: [[UInt8]] = []
        while outbox.withOldest(
            timeout: 0,
            { m in
                out.append(Array(m.payload))
                return .published
            }
        ) {}
        return out
    }

    private func readU16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
    private func readU64(_ b: [UInt8], _ i: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[i + $1]) << (8 * $1) }
    }
    private func readF64(_ b: [UInt8], _ i: Int) -> Double { Double(bitPattern: readU64(b, i)) }
    private func readF32(_ b: [UInt8], _ i: Int) -> Float {
        Float(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[i + $1]) << (8 * $1) })
    }

    @Test func jsonBatchesCarryEverySampleInOrder() throws {
        let outbox = Outbox()
        let hub = SensorHub(outbox: outbox)
        let accel = try #require(
            RawSensorStream(
                name: .accelerometer,
                settings: StreamSettings(enabled: true, rateHz: 100, qos: 0, retain: false, batch: 10)
            )
        )
        accel.configure(settings: accel.settings, sensorRatesHz: [.accelerometer: 100], topicID: 0)
        hub.setStreams([accel])
        for i in 0..<105 { hub.ingest(IMUSample(timestamp: Double(i) / 100, acceleration: Vector3(0, Double(i), -1))) }
        let full = drain(outbox)
        #expect(full.count == 10, "105 samples in batches of 10: 10 full messages, 5 held back")
        // A reconfiguration (or shutdown) publishes the partial batch: nothing is lost.
        hub.flushThenReconfigure { _ in }
        let all = full + drain(outbox)
        var seqs: [Int] = []
        for message in all {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(message)) as? [String: Any])
            let batch = try #require(object["batch"] as? [[String: Any]])
            for sample in batch {
                seqs.append(sample["seq"] as! Int)
                let a = try #require(sample["acceleration"] as? [String: Double])
                #expect(a["y"] == Double(sample["seq"] as! Int - 1))
            }
        }
        #expect(seqs == Array(1...105))
    }

    @Test func binaryBatchesFollowTheDocumentedLayout() throws {
        let outbox = Outbox()
        let hub = SensorHub(outbox: outbox)
        let gyro = try #require(
            RawSensorStream(
                name: .gyroscope,
                settings: StreamSettings(
                    enabled: true,
                    rateHz: 200,
                    qos: 0,
                    retain: false,
                    batch: 50,
                    encoding: .binary
                )
            )
        )
        gyro.configure(settings: gyro.settings, sensorRatesHz: [.gyroscope: 200], topicID: 0)
        hub.setStreams([gyro])
        for i in 0..<100 {
            hub.ingest(IMUSample(timestamp: 10 + Double(i) / 200, rotationRate: Vector3(0.5, -0.25, Double(i))))
        }
        let messages = drain(outbox)
        #expect(messages.count == 2)
        for (m, message) in messages.enumerated() {
            #expect(Array(message[0..<3]) == Array("MAB".utf8))
            #expect(message[3] == 1 && message[4] == 2, "version 1, kind gyroscope")
            let count = readU16(message, 6)
            #expect(count == 50)
            #expect(readU64(message, 8) == UInt64(m * 50 + 1), "seq of the first sample")
            #expect(message.count == 16 + count * 28)
            for k in 0..<count {
                let r = 16 + k * 28
                let i = m * 50 + k
                #expect(readF64(message, r) == 10 + Double(i) / 200)
                #expect(readF32(message, r + 16) == 0.5 && readF32(message, r + 20) == -0.25)
                #expect(readF32(message, r + 24) == Float(i))
            }
        }
        let decoded = try messages.flatMap { try PayloadDecoder.decode($0, kind: .gyroscope) }
        #expect(decoded.map(\.envelope.seq) == Array(1...100))
        #expect(decoded.last?.payload == .rotationRate(Vector3(0.5, -0.25, 99)))
    }

    /// The binary batches of a 100 Hz device-motion stream (xArbitraryZVertical) fed a still simulated IMU.
    private func binaryDeviceMotion(
        batch: Int,
        seconds: Double,
        reference: ReferenceAttitude? = nil
    ) -> [[UInt8]] {
        let outbox = Outbox(capacityBytes: 16 << 20)
        let hub = SensorHub(outbox: outbox)
        let stream = DeviceMotionStream(
            settings: StreamSettings(
                enabled: true,
                rateHz: 100,
                qos: 0,
                retain: false,
                batch: batch,
                encoding: .binary
            ),
            referenceFrame: .xArbitraryZVertical,
            declinationDegrees: 0
        )
        stream.configure(settings: stream.settings, sensorRatesHz: [.accelerometer: 100, .gyroscope: 100], topicID: 0)
        stream.referenceAttitude = reference
        hub.setStreams([stream])
        for (sample, _) in SimulatedRecording(
            imu: SimulatedIMU(scenario: .stationary, seed: 2, errors: .ideal),
            rateHz: 100,
            duration: seconds
        ) {
            hub.ingest(sample)
        }
        return drain(outbox)
    }

    @Test func deviceMotionBatchesInBinary() throws {
        let messages = binaryDeviceMotion(batch: 25, seconds: 2.49)
        #expect(messages.count == 10)
        let m = try #require(messages.last)
        // Device motion's layout version 2: 120-byte records with the attitude accuracies and the relative attitude.
        #expect(m[3] == 2 && m[4] == 4 && readU16(m, 6) == 25 && m.count == 16 + 25 * 120)
        let r = 16 + 24 * 120
        let q = (readF32(m, r + 16), readF32(m, r + 20), readF32(m, r + 24), readF32(m, r + 28))
        #expect(abs(q.0 * q.0 + q.1 * q.1 + q.2 * q.2 + q.3 * q.3 - 1) < 1e-5)
        #expect(readF32(m, r + 52) < -0.99, "gravity z, face up")
        #expect(readF32(m, r + 80) == -1, "no heading in an arbitrary frame")
        let last = try #require(try PayloadDecoder.decode(m, kind: .deviceMotion).last)
        #expect(last.envelope.seq == 250)
        guard case .deviceMotion(let motion) = last.payload else {
            Issue.record("not device motion: \(last.payload)")
            return
        }
        #expect(motion.referenceFrame == .xArbitraryZVertical && motion.heading == -1)
        #expect(readF32(m, r + 92) == -1, "no heading accuracy in xArbitraryZVertical")
        #expect(m[r + 86] == 0 && motion.relativeAttitude == nil, "no reference attitude set")
        #expect(motion.inclinationAccuracy > 0 && motion.inclinationAccuracy < 5, "stationary: a small tilt σ")
        #expect(motion.headingAccuracy == -1)
    }

    @Test func binaryDeviceMotionCarriesTheRelativeAttitudeWhileAReferenceIsSet() throws {
        let reference = ReferenceAttitude(quaternion: Quaternion(w: 0.8, x: 0, y: 0.6, z: 0), time: 1_795_241_100.25)
        let messages = binaryDeviceMotion(batch: 10, seconds: 0.99, reference: reference)
        #expect(messages.count == 10)
        let decoded = try messages.flatMap { try PayloadDecoder.decode($0, kind: .deviceMotion) }
        #expect(decoded.count == 100)
        for message in decoded {
            guard case .deviceMotion(let motion) = message.payload, let relative = motion.relativeAttitude else {
                Issue.record("seq \(message.envelope.seq): no relative attitude in \(message.payload)")
                continue
            }
            // The record's f32 attitude and relative quaternion: reference⁻¹ ⊗ attitude to float precision.
            let expected = motion.attitude.multiplied(byInverseOf: reference.quaternion)
            let gap = max(
                abs(relative.quaternion.w - expected.w),
                abs(relative.quaternion.x - expected.x),
                abs(relative.quaternion.y - expected.y),
                abs(relative.quaternion.z - expected.z)
            )
            #expect(gap < 1e-6, "seq \(message.envelope.seq)")
            #expect(relative.referenceTime == reference.time)
        }
    }
}
