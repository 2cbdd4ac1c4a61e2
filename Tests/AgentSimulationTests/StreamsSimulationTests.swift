import AgentConfig
import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionEstimation
import MotionWire
import Testing

/// The raw streams on virtual time (moved from RawStreamEndToEndTests, issue 40): topics, Core Motion's fields,
/// units and sign, rates (exact, on the virtual IMU's clock), sequence, QoS and retain per stream; rates above the
/// hardware clamped to its ODR ladder and unneeded sensors switched off.
@Suite struct StreamsSimulationTests {
    typealias Scenario = DeliveryScenario

    static func vector(_ object: [String: Any], _ key: String) -> (x: Double, y: Double, z: Double)? {
        guard let v = object[key] as? [String: Any], let x = v["x"] as? Double, let y = v["y"] as? Double,
            let z = v["z"] as? Double
        else { return nil }
        return (x, y, z)
    }

    /// Messages per second, from the sensor timestamps of the messages received.
    static func rate(_ messages: [InboundMessage]) -> Double {
        let t = messages.compactMap { Scenario.json($0)["timestamp"] as? Double }
        guard t.count > 2, let first = t.first, let last = t.last, last > first else { return 0 }
        return Double(t.count - 1) / (last - first)
    }

    @Test func rawStreamsArriveWithCoreMotionFieldsUnitsAndRates() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        let subscriber = try SimulatedTool(world, clientID: "raw-sub", subscribe: ["motion/raw/#"])
        var fleet = SimulatedFleetConfiguration()
        fleet.streams = [
            .init("accelerometer", rateHz: 50, qos: 0),
            .init("gyroscope", rateHz: 100, qos: 1),
            .init("magnetometer", rateHz: 20, qos: 0),
        ]
        let configuration = try fleet.configuration(
            deviceID: "raw",
            adding: [
                ("streams.accelerometer.retain", "false"), ("streams.gyroscope.retain", "false"),
                ("streams.magnetometer.retain", "true"),
            ]
        )
        let device = world.addDevice("raw", configuration: configuration, seed: 31)
        world.start(device)
        #expect(subscriber.waitUntil(timeout: 20) { subscriber.messages(on: "motion/raw/accelerometer").count >= 120 })
        world.run(for: 1)
        let accel = subscriber.messages(on: "motion/raw/accelerometer")
        let gyro = subscriber.messages(on: "motion/raw/gyroscope")
        let mag = subscriber.messages(on: "motion/raw/magnetometer")

        // Rates: exactly what was asked for (on real parts ±10 %: a real clock and a real scheduler).
        #expect(abs(Self.rate(accel) - 50) < 1e-6, "accelerometer \(Self.rate(accel)) Hz")
        #expect(abs(Self.rate(gyro) - 100) < 1e-6, "gyroscope \(Self.rate(gyro)) Hz")
        #expect(abs(Self.rate(mag) - 20) < 1e-6, "magnetometer \(Self.rate(mag)) Hz")
        // And as many messages as the time they cover holds, all three streams from the same samples.
        #expect(abs(Double(gyro.count) / Double(accel.count) - 2) < 0.05, "\(gyro.count) vs \(accel.count)")
        #expect(abs(Double(accel.count) / Double(mag.count) - 2.5) < 0.1, "\(accel.count) vs \(mag.count)")

        // seq rises by one per message, from 1, without gaps.
        for (name, messages) in [("accelerometer", accel), ("gyroscope", gyro), ("magnetometer", mag)] {
            let seqs = messages.compactMap { Scenario.json($0)["seq"] as? Int }
            #expect(seqs.count == messages.count, "\(name): every message has seq")
            #expect(seqs.first == 1, "\(name) starts at 1")
            #expect(seqs == Array(seqs.indices.map { $0 + 1 }), "\(name) seq has no gaps")
        }

        // Units and Core Motion's sign: a stationary device lying face up reads (0, 0, −1) g.
        let now = world.clock.realtimeSeconds()
        var sum = (0.0, 0.0, 0.0)
        for m in accel {
            let o = Scenario.json(m)
            let a = try #require(Self.vector(o, "acceleration"))
            sum = (sum.0 + a.x, sum.1 + a.y, sum.2 + a.z)
            let time = try #require(o["time"] as? Double)
            #expect(abs(time - now) < 60, "time is wall-clock Unix seconds")
            #expect(o["timestamp"] is Double)
        }
        let n = Double(accel.count)
        let mean = (sum.0 / n, sum.1 / n, sum.2 / n)
        #expect(abs((mean.0 * mean.0 + mean.1 * mean.1 + mean.2 * mean.2).squareRoot() - 1) < 0.02, "|a| = 1 g at rest")
        #expect(mean.2 < -0.98, "face up at rest: z = −1 g (Core Motion's sign), got \(mean)")
        for m in gyro {
            let w = try #require(Self.vector(Scenario.json(m), "rotationRate"))
            #expect(abs(w.x) < 0.1 && abs(w.y) < 0.1 && abs(w.z) < 0.1, "rad/s at rest")
        }
        // µT: the field of the configured place (default 48.2 N 16.37 E, 200 m) by the WMM, as on real parts.
        let expected =
            try WorldMagneticModel.wmm2025.field(
                latitude: 48.2,
                longitude: 16.37,
                altitudeKm: 0.2,
                decimalYear: WorldMagneticModel.decimalYear(from: Date(timeIntervalSince1970: now))
            ).totalNanotesla / 1000
        for m in mag {
            let b = try #require(Self.vector(Scenario.json(m), "magneticField"))
            let norm = (b.x * b.x + b.y * b.y + b.z * b.z).squareRoot()
            #expect(abs(norm - expected) < 15, "µT: |B| \(norm) vs WMM \(expected)")
        }

        // Messages say when the system clock is not synchronized, consistently with the status.
        let status = try #require(Scenario.statuses(subscriber, "raw").last)
        let synchronized = try #require(status.clockSynchronized)
        let flagged = accel.dropFirst(60).map { Scenario.json($0)["clockSynchronized"] as? Bool }
        #expect(flagged.allSatisfy { synchronized ? $0 == nil : $0 == false }, "clock synchronized: \(synchronized)")

        // QoS and retain per stream: the gyroscope went QoS 1, the others QoS 0; live messages carry no retain
        // flag; the magnetometer is retained.
        #expect(gyro.allSatisfy { $0.qos == 1 })
        #expect(accel.allSatisfy { $0.qos == 0 } && mag.allSatisfy { $0.qos == 0 })
        #expect((accel + gyro + mag).allSatisfy { !$0.retain })
        #expect(subscriber.retained("motion/raw/accelerometer") == nil)
        #expect(subscriber.retained("motion/raw/gyroscope") == nil)
        let late = try SimulatedTool(world, clientID: "late", subscribe: ["motion/raw/magnetometer"])
        let retained = try #require(late.messages.first, "a new subscriber gets the retained magnetometer sample")
        #expect(retained.retain)
        let newest = try #require(subscriber.messages(on: "motion/raw/magnetometer").last)
        #expect(retained.payload == newest.payload, "the retained sample is the newest")
    }

    @Test func ratesAboveTheHardwareAreClampedAndUnneededSensorsSwitchedOff() throws {
        let world = SimulationWorld()
        world.addBroker(name: "broker")
        let subscriber = try SimulatedTool(world, clientID: "clamp-sub", subscribe: ["motion/clamp/#"])
        var fleet = SimulatedFleetConfiguration()
        // The virtual IMU's fastest rate is 200 Hz (its ladder: 1, 2, 5, 10, 20, 50, 100, 200).
        fleet.streams = [.init("accelerometer", rateHz: 400)]
        let device = world.addDevice("clamp", configuration: try fleet.configuration(deviceID: "clamp"), seed: 32)
        world.start(device)
        #expect(
            subscriber.waitUntil(timeout: 20) { subscriber.messages(on: "motion/clamp/accelerometer").count >= 500 }
        )
        let status = try #require(Scenario.statuses(subscriber, "clamp").last)
        let streams = try #require(status.streams)
        #expect(streams["accelerometer"]?.requestedRateHz == 400)
        #expect(streams["accelerometer"]?.rateHz == 200, "clamped to the hardware's maximum")
        #expect(streams["gyroscope"]?.rateHz == 0)
        let hardware = try #require(status.devices?.first)
        #expect(hardware.activeSensors == ["accelerometer"], "gyroscope, magnetometer and barometer are off")
        #expect(hardware.rateHz == 200)
        #expect(device.process?.source.rateHz == 200, "the IMU runs at its fastest rate, not above")
        let rate = Self.rate(subscriber.messages(on: "motion/clamp/accelerometer"))
        #expect(abs(rate - 200) < 1e-6, "\(rate) Hz")
        #expect(subscriber.messages(on: "motion/clamp/gyroscope").isEmpty)
        #expect(subscriber.messages(on: "motion/clamp/magnetometer").isEmpty)
        print(
            "streams (simulated): accelerometer asked 400 Hz, status \(streams["accelerometer"]?.rateHz ?? -1) Hz, measured \(rate) Hz; hardware notes \(status.hardwareNotes)"
        )
    }
}
