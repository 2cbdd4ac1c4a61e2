import Foundation
import MotionModel
import MotionWire
import Testing

@testable import FleetConsole

/// A watched device's streams as the page receives them.
struct DeviceLiveTests {
    static func encoded(_ payload: StreamPayload, seq: UInt64, time: Double) -> [UInt8] {
        var buffer = JSONBuffer()
        PayloadEncoder.encode(
            MessageEnvelope(seq: seq, timestamp: Double(seq) * 0.02, time: time),
            payload,
            into: &buffer
        )
        return buffer.withBytes { Array($0) }
    }

    @Test func framesCarryTheSamplesSinceTheLastFrameOnce() throws {
        var live = DeviceLive(device: "imu-1", root: "motion/{device}")
        for seq in 0..<5 {
            let payload = Self.encoded(
                .acceleration(Vector3(0, 0, -1)),
                seq: UInt64(seq),
                time: 100 + Double(seq) * 0.02
            )
            let result1 = live.receive(topic: "motion/imu-1/accelerometer", payload: payload, now: Double(seq) * 0.02)
            #expect(result1)
        }
        let produced = live.frame(now: 0.1, withRates: true)
        let frame = try #require(produced)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(frame.utf8)) as? [String: Any])
        let samples = try #require(object["acceleration"] as? [[Double]])
        #expect(samples.count == 5)
        #expect(samples[0] == [100, 0, 0, -1])
        #expect((object["rates"] as? [String: Double])?["accelerometer"] == 2.5)
        // Nothing new: no frame (unless rates are due).
        let result2 = live.frame(now: 0.2, withRates: false)
        #expect(result2 == nil)
    }

    @Test func deviceMotionGivesTheAttitudeAndHeading() throws {
        var live = DeviceLive(device: "imu-1", root: "motion/{device}")
        let motion = DeviceMotion(
            timestamp: 1,
            attitude: Quaternion(w: 0.7071, x: 0, y: 0, z: 0.7071),
            rotationRate: Vector3(0, 0, 0.5),
            gravity: Vector3(0, 0, -1),
            userAcceleration: Vector3(0.1, 0, 0),
            magneticField: Vector3(0, 0, 0),
            magneticFieldAccuracy: .uncalibrated,
            heading: 90,
            referenceFrame: .xMagneticNorthZVertical,
            inclinationAccuracy: 0,
            headingAccuracy: 0
        )
        live.receive(
            topic: "motion/imu-1/device-motion",
            payload: Self.encoded(.deviceMotion(motion), seq: 1, time: 200),
            now: 0
        )
        let produced = live.frame(now: 0, withRates: false)
        let frame = try #require(produced)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(frame.utf8)) as? [String: Any])
        let attitude = try #require((object["attitude"] as? [[Double]])?.first)
        #expect(attitude[0] == 200)
        #expect(abs(attitude[1] - 0.7071) < 1e-3)
        #expect(attitude[5] == 90)
        #expect(attitude[8] == 0.5)
        let latest = try #require(object["latest"] as? [String: [String: Double]])
        #expect(latest["device-motion"]?["heading"] == 90)
    }

    /// A stream the page has no view of its own for (the sensors' temperature) shows its latest message by the
    /// generated summary, not as an event.
    @Test func aStreamWithoutAViewShowsItsLatestSummary() throws {
        var live = DeviceLive(device: "imu-1", root: "motion/{device}")
        live.receive(
            topic: "motion/imu-1/temperature",
            payload: Self.encoded(.temperature(TemperatureData(timestamp: 1, temperatureC: 31.62)), seq: 1, time: 200),
            now: 0
        )
        let produced = live.frame(now: 0, withRates: false)
        let frame = try #require(produced)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(frame.utf8)) as? [String: Any])
        let latest = try #require(object["latest"] as? [String: [String: String]])
        #expect(latest["temperature"]?["summary"] == "temperature=31.62 °C")
        #expect(object["events"] == nil, "not an event")
    }

    @Test func otherTopicsAndJunkAreNotSamples() {
        var live = DeviceLive(device: "imu-1", root: "motion/{device}")
        let result3 = live.receive(topic: "motion/imu-1/status", payload: Array("{}".utf8), now: 0)
        #expect(!result3)
        let result4 = live.receive(topic: "motion/imu-1/accelerometer", payload: Array("{junk".utf8), now: 0)
        #expect(!result4)
        let result5 = live.receive(topic: "motion/other/accelerometer", payload: Array("{}".utf8), now: 0)
        #expect(!result5)
        #expect(live.undecodable == 1)
        #expect(!live.hasNews)
    }

    @Test func numbersThatJSONCannotCarryBecomeNull() {
        #expect(DeviceLive.number(.nan) == "null")
        #expect(DeviceLive.number(.infinity) == "null")
        #expect(DeviceLive.number(3) == "3")
        #expect(DeviceLive.number(0.25) == "0.25")
    }
}
