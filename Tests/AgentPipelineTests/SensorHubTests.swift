import AgentConfig
import AgentPipeline
import AgentPorts
import Foundation
import MotionModel
import MotionWire
import Testing

@Suite struct SensorHubTests {
    @Test func rawStreamsEncodeTheirFieldAtTheirRate() throws {
        let outbox = Outbox()
        let hub = SensorHub(outbox: outbox)
        let accel = try #require(
            RawSensorStream(
                name: .accelerometer,
                settings: StreamSettings(enabled: true, rateHz: 50, qos: 1, retain: false)
            )
        )
        let mag = try #require(
            RawSensorStream(
                name: .magnetometer,
                settings: StreamSettings(enabled: true, rateHz: 10, qos: 0, retain: true)
            )
        )
        accel.configure(settings: accel.settings, sensorRatesHz: [.accelerometer: 200], topicID: 3)
        mag.configure(settings: mag.settings, sensorRatesHz: [.magnetometer: 200], topicID: 4)
        hub.setStreams([accel, mag])
        for i in 0..<400 {
            hub.ingest(
                IMUSample(
                    timestamp: 1000 + Double(i) / 200,
                    acceleration: Vector3(0.01, -0.02, -1),
                    rotationRate: Vector3(0, 0, 0.1),
                    magneticField: Vector3(21.4, -1.6, -44)
                )
            )
        }
        var byTopic: [Int: [[String: Any]]] = [:]
        var qos: [Int: Int] = [:]
        var retained: [Int: Bool] = [:]
        while outbox.withOldest(
            timeout: 0,
            { m in
                let json = try? JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any]
                byTopic[m.topicID, default: []].append(json ?? [:])
                qos[m.topicID] = m.qos
                retained[m.topicID] = m.retain
                return .published
            }
        ) {}
        #expect(byTopic[3]?.count == 100)
        #expect(byTopic[4]?.count == 20)
        #expect(qos[3] == 1 && retained[4] == true)
        let first = try #require(byTopic[3]?.first)
        #expect(first["seq"] as? Int == 1)
        #expect(first["timestamp"] as? Double == 1000)
        let acceleration = try #require(first["acceleration"] as? [String: Double])
        #expect(acceleration == ["x": 0.01, "y": -0.02, "z": -1])
        let seqs = byTopic[3]!.compactMap { $0["seq"] as? Int }
        #expect(seqs == Array(1...100))
        let field = try #require(byTopic[4]?.last?["magneticField"] as? [String: Double])
        #expect(field == ["x": 21.4, "y": -1.6, "z": -44])
    }

    @Test func nonFiniteReadingsAreCountedAndNotPublished() throws {
        let outbox = Outbox()
        let hub = SensorHub(outbox: outbox)
        let gyro = try #require(
            RawSensorStream(
                name: .gyroscope,
                settings: StreamSettings(enabled: true, rateHz: 100, qos: 0, retain: false)
            )
        )
        gyro.configure(settings: gyro.settings, sensorRatesHz: [.gyroscope: 100], topicID: 0)
        hub.setStreams([gyro])
        hub.ingest(IMUSample(timestamp: 1, rotationRate: Vector3(.nan, 0, 0)))
        hub.ingest(IMUSample(timestamp: 1.01, rotationRate: Vector3(0, 0, 1)))
        #expect(hub.counters.invalidReadings == 1)
        #expect(outbox.snapshot.enqueued == 1)
    }

    @Test func stoppedStreamsPublishNothing() throws {
        let outbox = Outbox()
        let hub = SensorHub(outbox: outbox)
        let accel = try #require(
            RawSensorStream(
                name: .accelerometer,
                settings: StreamSettings(enabled: false, rateHz: 50, qos: 0, retain: false)
            )
        )
        accel.configure(settings: accel.settings, sensorRatesHz: [.accelerometer: 100], topicID: 0)
        hub.setStreams([accel])
        for i in 0..<100 { hub.ingest(IMUSample(timestamp: Double(i) / 100, acceleration: Vector3(0, 0, -1))) }
        #expect(outbox.snapshot.enqueued == 0)
        #expect(accel.effectiveRateHz == 0)
    }
}
