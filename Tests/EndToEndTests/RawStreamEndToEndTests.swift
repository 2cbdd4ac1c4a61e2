import AgentPorts
import Foundation
import MotionEstimation
import TestSupport
import Testing

/// The real agent binary, the real mosquitto, a real subscriber: topics, payloads, units, rates, sequence.
@Suite(.timeLimit(.minutes(5)), .serialized) struct RawStreamEndToEndTests {
    static func vector(_ object: [String: Any], _ key: String) -> (Double, Double, Double)? {
        guard let v = object[key] as? [String: Any], let x = v["x"] as? Double, let y = v["y"] as? Double,
            let z = v["z"] as? Double
        else { return nil }
        return (x, y, z)
    }

    /// Messages per second, from the sensor timestamps of the messages received (robust to delivery jitter).
    static func rate(_ messages: [InboundMessage]) -> Double {
        let t = messages.compactMap { payloadJSON($0)["timestamp"] as? Double }
        guard t.count > 2, let first = t.first, let last = t.last, last > first else { return 0 }
        return Double(t.count - 1) / (last - first)
    }

    @Test func rawStreamsArriveWithCoreMotionFieldsUnitsAndRates() async throws {
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-raw/#"])
        let agent = try AgentProcess(
            config: AgentProcess.config(
                device: "e2e-raw",
                port: broker.port,
                streams: """
                    streams:
                      accelerometer: {enabled: true, rate_hz: 50, qos: 0, retain: false}
                      gyroscope: {enabled: true, rate_hz: 100, qos: 1, retain: false}
                      magnetometer: {enabled: true, rate_hz: 20, qos: 0, retain: true}
                    """
            )
        )
        defer { agent.runner.kill() }
        try await subscriber.waitFor(count: 120, on: "motion/e2e-raw/accelerometer", timeout: 20)
        try await Task.sleep(for: .seconds(1))
        let accel = subscriber.messages(on: "motion/e2e-raw/accelerometer")
        let gyro = subscriber.messages(on: "motion/e2e-raw/gyroscope")
        let mag = subscriber.messages(on: "motion/e2e-raw/magnetometer")

        // Rates within ±10 %.
        #expect(abs(Self.rate(accel) - 50) <= 5, "accelerometer \(Self.rate(accel)) Hz")
        #expect(abs(Self.rate(gyro) - 100) <= 10, "gyroscope \(Self.rate(gyro)) Hz")
        #expect(abs(Self.rate(mag) - 20) <= 2, "magnetometer \(Self.rate(mag)) Hz")

        // seq rises by one per message, from 1, without gaps.
        for (name, messages) in [("accelerometer", accel), ("gyroscope", gyro), ("magnetometer", mag)] {
            let seqs = messages.compactMap { payloadJSON($0)["seq"] as? Int }
            #expect(seqs.count == messages.count, "\(name): every message has seq")
            #expect(seqs.first == 1, "\(name) starts at 1")
            #expect(seqs == Array(seqs.indices.map { $0 + 1 }), "\(name) seq has no gaps")
        }

        // Units and Core Motion's sign: a stationary device lying face up reads (0, 0, −1) g.
        let now = Date().timeIntervalSince1970
        var sum = (0.0, 0.0, 0.0)
        for m in accel {
            let o = payloadJSON(m)
            let a = try #require(Self.vector(o, "acceleration"))
            sum = (sum.0 + a.0, sum.1 + a.1, sum.2 + a.2)
            let time = try #require(o["time"] as? Double)
            #expect(abs(time - now) < 60, "time is wall-clock Unix seconds")
            #expect(o["timestamp"] is Double)
        }
        let n = Double(accel.count)
        let mean = (sum.0 / n, sum.1 / n, sum.2 / n)
        #expect(abs((mean.0 * mean.0 + mean.1 * mean.1 + mean.2 * mean.2).squareRoot() - 1) < 0.02, "|a| = 1 g at rest")
        #expect(mean.2 < -0.98, "face up at rest: z = −1 g (Core Motion's sign), got \(mean)")
        for m in gyro {
            let w = try #require(Self.vector(payloadJSON(m), "rotationRate"))
            #expect(abs(w.0) < 0.1 && abs(w.1) < 0.1 && abs(w.2) < 0.1, "rad/s at rest, bias included")
        }
        // The magnetometer senses the WMM field of the configured place (default 48.2 N 16.37 E, 200 m).
        let expected =
            try WorldMagneticModel.wmm2025.field(
                latitude: 48.2,
                longitude: 16.37,
                altitudeKm: 0.2,
                decimalYear: WorldMagneticModel.decimalYear(from: Date())
            ).totalNanotesla / 1000
        for m in mag {
            let b = try #require(Self.vector(payloadJSON(m), "magneticField"))
            let norm = (b.0 * b.0 + b.1 * b.1 + b.2 * b.2).squareRoot()
            // Hard iron of the simulated board shifts the raw norm by a few µT.
            #expect(abs(norm - expected) < 15, "µT: |B| \(norm) vs WMM \(expected)")
        }

        // Messages say when the system clock is not synchronized, consistently with the status.
        let status = try #require(subscriber.messages(on: "motion/e2e-raw/status").last.map(payloadJSON))
        let synchronized = try #require(status["clockSynchronized"] as? Bool)
        let flagged = accel.dropFirst(60).map { payloadJSON($0)["clockSynchronized"] as? Bool }
        #expect(flagged.allSatisfy { synchronized ? $0 == nil : $0 == false }, "clock synchronized: \(synchronized)")

        // QoS and retain per stream: the gyroscope went QoS 1; the magnetometer is retained.
        #expect(gyro.allSatisfy { $0.qos == 1 })
        let late = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-raw/magnetometer"])
        try await late.waitFor(count: 1, timeout: 5)
        #expect(late.messages.first?.retain == true, "a new subscriber gets the retained magnetometer sample")
        await late.close()
        await subscriber.close()
    }

    @Test func ratesAboveTheHardwareAreClampedAndUnneededSensorsSwitchedOff() async throws {
        let broker = try await MosquittoBroker.started()
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/e2e-clamp/#"])
        let agent = try AgentProcess(
            config: AgentProcess.config(
                device: "e2e-clamp",
                port: broker.port,
                simulatedRateHz: 100,
                streams: """
                    streams:
                      accelerometer: {enabled: true, rate_hz: 400}
                      gyroscope: {enabled: false}
                      magnetometer: {enabled: false}
                      device-motion: {enabled: false}
                      pedometer: {enabled: false}
                      activity: {enabled: false}
                      altimeter: {enabled: false}
                    """
            )
        )
        defer { agent.runner.kill() }
        try await subscriber.waitFor(count: 250, on: "motion/e2e-clamp/accelerometer", timeout: 20)
        let status = try #require(subscriber.messages(on: "motion/e2e-clamp/status").last.map(payloadJSON))
        let streams = try #require(status["streams"] as? [String: [String: Any]])
        #expect(streams["accelerometer"]?["requestedRateHz"] as? Double == 400)
        #expect(streams["accelerometer"]?["rateHz"] as? Double == 100, "clamped to the hardware's maximum")
        #expect(streams["gyroscope"]?["rateHz"] as? Double == 0)
        let device = try #require((status["devices"] as? [[String: Any]])?.first)
        #expect(device["activeSensors"] as? [String] == ["accelerometer"], "gyroscope and magnetometer are off")
        let rate = Self.rate(subscriber.messages(on: "motion/e2e-clamp/accelerometer"))
        #expect(abs(rate - 100) <= 10, "\(rate) Hz")
        #expect(subscriber.messages(on: "motion/e2e-clamp/gyroscope").isEmpty)
        #expect(subscriber.messages(on: "motion/e2e-clamp/magnetometer").isEmpty)
        await subscriber.close()
    }
}
