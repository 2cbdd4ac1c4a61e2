import AgentPorts
import Foundation
import MotionModel
import Recording
import TestSupport
import Testing

/// The real agent binary on fake IIO devices (Sources/Harness/FakeIIOTree/fake_iio.py: sysfs and /dev/iio:deviceN as the
/// kernel presents them, read through the real libiio), the real mosquitto, a real subscriber: raw counts in,
/// Core Motion's units and signs out on MQTT; rates chosen from `sampling_frequency_available`; device
/// selection and mount-matrix overrides from config.yaml; a device vanishing and coming back; `list-sensors`
/// and `record` in the tree, and the recording played back through the agent.
///
/// They need root (or CAP_SYS_ADMIN) for the fixture's private mount namespace; without it they fail with the
/// fixture's message saying so.
@Suite(.timeLimit(.minutes(10)), .serialized) struct IIOEndToEndTests {
    // MARK: The fake board

    /// Standard gravity, m/s² per g (CGPM 1901; the kernel reports m/s², Core Motion g).
    static let standardGravity = 9.80665
    /// inv_icm42600 at ±16 g and ±2000 °/s (FakeIIOModels.icm42600).
    static let accelScale = 0.004788403
    static let gyroScale = 0.001065264
    /// ak8975 per-axis scales, G/count, and its driver's mount matrix (FakeIIOModels.ak8975).
    static let magnetometerScales = (0.003363, 0.003375, 0.003234)
    static let magnetometerRaw = (100, -200, 300)

    /// Counts per record: x, y, z, temperature (the icm42600 scan order). Two records, cycled, so a value
    /// that is not recomputed from its own counts shows.
    static let accelRecords: [[Int64]] = [[100, -200, 2048, 0], [-1000, 500, -2048, 132]]
    static let gyroRecords: [[Int64]] = [[1000, -500, 250, 0], [-2000, 0, 32767, -132]]

    typealias Triple = (Double, Double, Double)

    /// g in Core Motion's sign: IIO reports specific force (+1 g up at rest), Core Motion its opposite.
    static let expectedAcceleration: [Triple] = accelRecords.map { r in
        (
            -Double(r[0]) * accelScale / standardGravity, -Double(r[1]) * accelScale / standardGravity,
            -Double(r[2]) * accelScale / standardGravity
        )
    }
    static let expectedRotationRate: [Triple] = gyroRecords.map { r in
        (Double(r[0]) * gyroScale, Double(r[1]) * gyroScale, Double(r[2]) * gyroScale)
    }
    /// µT in the chip's axes (Gauss × 100).
    static let magnetometerChip: Triple = (
        Double(magnetometerRaw.0) * magnetometerScales.0 * 100, Double(magnetometerRaw.1) * magnetometerScales.1 * 100,
        Double(magnetometerRaw.2) * magnetometerScales.2 * 100
    )
    /// The driver's matrix "0, -1, 0; -1, 0, 0; 0, 0, -1" applied: board = M · chip.
    static let expectedMagneticField: Triple = (-magnetometerChip.1, -magnetometerChip.0, -magnetometerChip.2)

    static let accelRates = "12.500000 25.000000 50.000000 100.000000 200.000000 400.000000 800.000000 1600.000000"
    /// The gyro tops out at 100 Hz here, so a request above it is clamped.
    static let gyroRates = "12.500000 25.000000 50.000000 100.000000"

    /// icm42600 accel (iio:device0) and gyro (iio:device1), ak8975 (iio:device2, polled), bmp280 (iio:device3).
    static func board(
        t0Ns: Int64 = monotonicNowNs(),
        accelVanish: (after: Int, seconds: Double)? = nil
    )
        -> FakeIIOSpec
    {
        var accel = FakeIIOModels.icm42600(
            kind: .accel,
            id: "iio:device0",
            records: accelRecords,
            available: accelRates
        )
        accel.t0_ns = t0Ns
        if let vanish = accelVanish { accel.vanish(after: vanish.after, seconds: vanish.seconds) }
        var gyro = FakeIIOModels.icm42600(kind: .gyro, id: "iio:device1", records: gyroRecords, available: gyroRates)
        gyro.t0_ns = t0Ns
        return FakeIIOSpec(devices: [
            accel, gyro,
            FakeIIOModels.ak8975(id: "iio:device2", raw: magnetometerRaw),
            FakeIIOModels.bmp280(id: "iio:device3", pressureKPa: "100.125000000", temperatureMilliC: "23500"),
        ])
    }

    static func config(device: String, port: Int, iio: String = "", streams: String) -> String {
        """
        device:
          id: \(device)
        agent:
          state_dir: state
          log_level: info
        source:
          kind: iio
          iio:
            uri: "local:"
        \(iio)
        mqtt:
          host: 127.0.0.1
          port: \(port)
          keepalive: 5
          reconnect_min_delay: 0.2
          reconnect_max_delay: 1
        \(streams)
        """
    }

    static let rawStreamsOnly = """
        streams:
          accelerometer: {enabled: true, rate_hz: 130}
          gyroscope: {enabled: true, rate_hz: 130}
          magnetometer: {enabled: true, rate_hz: 20}
          device-motion: {enabled: false}
          pedometer: {enabled: false}
          activity: {enabled: false}
          altimeter: {enabled: true, rate_hz: 2}
          submersion: {enabled: false}
        """

    // MARK: Helpers

    /// Whether `value` equals `expected` within the payload's rounding to `decimals` places.
    static func equal(_ value: Triple, _ expected: Triple, decimals: Int) -> Bool {
        let tolerance = 0.5 * pow(10, -Double(decimals)) + 1e-12
        return abs(value.0 - expected.0) <= tolerance && abs(value.1 - expected.1) <= tolerance
            && abs(value.2 - expected.2) <= tolerance
    }

    static func vector(_ m: InboundMessage, _ key: String) -> Triple? {
        guard let v = payloadJSON(m)[key] as? [String: Any], let x = v["x"] as? Double, let y = v["y"] as? Double,
            let z = v["z"] as? Double
        else { return nil }
        return (x, y, z)
    }

    static func lastStatus(_ subscriber: CapturingSubscriber, _ device: String) throws -> [String: Any] {
        try #require(subscriber.messages(on: "motion/\(device)/status").last.map(payloadJSON))
    }

    static func devices(_ status: [String: Any]) -> [String: [String: Any]] {
        var byID: [String: [String: Any]] = [:]
        for d in status["devices"] as? [[String: Any]] ?? [] {
            if let id = d["id"] as? String { byID[id] = d }
        }
        return byID
    }

    /// Messages per second from their sensor timestamps (robust to delivery jitter).
    static func rate(_ messages: [InboundMessage]) -> Double {
        let t = messages.compactMap { payloadJSON($0)["timestamp"] as? Double }
        guard t.count > 2, let first = t.first, let last = t.last, last > first else { return 0 }
        return Double(t.count - 1) / (last - first)
    }

    // MARK: Tests

    @Test func rawCountsArriveInCoreMotionUnitsAtRatesFromTheDevicesLists() async throws {
        let broker = try await MosquittoBroker.started()
        let device = "iio-chain"
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/\(device)/#"])
        let agent = try FakeIIOAgent(
            spec: Self.board(),
            config: Self.config(device: device, port: broker.port, streams: Self.rawStreamsOnly)
        )
        try await agent.explaining {
            try await subscriber.waitFor(count: 260, on: "motion/\(device)/accelerometer", timeout: 30)
            try await subscriber.waitFor(count: 20, on: "motion/\(device)/magnetometer", timeout: 30)
            try await subscriber.waitFor(count: 2, on: "motion/\(device)/altimeter", timeout: 30)
        }
        let accel = subscriber.messages(on: "motion/\(device)/accelerometer")
        let gyro = subscriber.messages(on: "motion/\(device)/gyroscope")
        let mag = subscriber.messages(on: "motion/\(device)/magnetometer")
        let altimeter = subscriber.messages(on: "motion/\(device)/altimeter")

        // Counts → m/s² → g in Core Motion's sign, 6 decimals on the wire.
        var seen = Set<Int>()
        for m in accel {
            let a = try #require(Self.vector(m, "acceleration"))
            let index = Self.expectedAcceleration.firstIndex { Self.equal(a, $0, decimals: 6) }
            #expect(index != nil, "acceleration \(a) is none of \(Self.expectedAcceleration)")
            if let index { seen.insert(index) }
        }
        #expect(seen == [0, 1], "both records arrive")
        // Counts → rad/s.
        #expect(!gyro.isEmpty)
        for m in gyro {
            let w = try #require(Self.vector(m, "rotationRate"))
            #expect(Self.expectedRotationRate.contains { Self.equal(w, $0, decimals: 6) }, "rotation rate \(w)")
        }
        // Counts → Gauss → µT, then the driver's mount matrix; 3 decimals (nT).
        for m in mag {
            let b = try #require(Self.vector(m, "magneticField"))
            #expect(Self.equal(b, Self.expectedMagneticField, decimals: 3), "\(b) vs \(Self.expectedMagneticField)")
        }
        // The bmp280's in_pressure_input is kPa already.
        for m in altimeter {
            let pressure = try #require(payloadJSON(m)["pressure"] as? Double)
            #expect(abs(pressure - 100.125) <= 0.5e-5, "pressure \(pressure) kPa")
        }

        // 130 Hz asked: the accel device runs at the next rate it lists (200 Hz) and the stream is decimated
        // to 130 Hz; the gyro lists at most 100 Hz, so it is clamped there. Rates from sensor timestamps.
        #expect(abs(Self.rate(accel) - 130) <= 130 * 0.05, "accelerometer \(Self.rate(accel)) Hz")
        #expect(abs(Self.rate(gyro) - 100) <= 100 * 0.05, "gyroscope \(Self.rate(gyro)) Hz")

        let status = try Self.lastStatus(subscriber, device)
        let devices = Self.devices(status)
        #expect(devices.keys.sorted() == ["iio:device0", "iio:device1", "iio:device2", "iio:device3"])
        #expect(devices["iio:device0"]?["name"] as? String == "icm42605-accel")
        #expect(devices["iio:device0"]?["rateHz"] as? Double == 200)
        #expect(devices["iio:device0"]?["activeSensors"] as? [String] == ["accelerometer"])
        #expect(devices["iio:device0"]?["supportedRatesHz"] as? String == "12.5 25 50 100 200 400 800 1600")
        #expect(devices["iio:device1"]?["rateHz"] as? Double == 100)
        #expect(devices["iio:device1"]?["activeSensors"] as? [String] == ["gyroscope"])
        #expect(devices["iio:device2"]?["activeSensors"] as? [String] == ["magnetometer"])
        #expect(devices["iio:device2"]?["rateHz"] as? Double == 20)
        #expect(devices["iio:device3"]?["activeSensors"] as? [String] == ["barometer"])
        for d in devices.values { #expect(d["error"] == nil, "\(d)") }
        let streams = try #require(status["streams"] as? [String: [String: Any]])
        #expect(streams["accelerometer"]?["requestedRateHz"] as? Double == 130)
        #expect(streams["accelerometer"]?["rateHz"] as? Double == 130)
        #expect(streams["gyroscope"]?["rateHz"] as? Double == 100, "clamped to the gyro's maximum")
        #expect((status["source"] as? String)?.hasPrefix("IIO at \"local:\"") == true)
        // The status names both: the clamp above the gyro's maximum, the 130 Hz the accel does not offer.
        let notes = try #require((status["configuration"] as? [String: Any])?["notes"] as? [String: String])
        #expect(notes["streams.gyroscope.rate_hz"] == "clamped by hardware to 100 Hz")
        #expect(
            notes["streams.accelerometer.rate_hz"]
                == "icm42605-accel (iio:device0) offers no 130 Hz: it samples at 200 Hz and the stream is decimated "
                + "to 130 Hz on average, at uneven intervals; for even intervals ask for a rate it offers "
                + "(12.5 25 50 100 200 400 800 1600)"
        )

        #expect(await agent.stop() == 0)
        await subscriber.close()
    }

    @Test func configSelectsDevicesAndOverridesAMountMatrix() async throws {
        let broker = try await MosquittoBroker.started()
        let device = "iio-select"
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/\(device)/#"])
        // One device by driver name, one by id. Two overrides match the magnetometer: the one naming the sensor
        // wins over the device-wide identity listed first, and swaps x and y instead of the driver's matrix.
        let iio = """
                devices: [icm42605-gyro, "iio:device2"]
                mount_matrix: ["iio:device2=1, 0, 0; 0, 1, 0; 0, 0, 1", "ak8975:magnetometer=0, 1, 0; 1, 0, 0; 0, 0, 1"]
            """
        let agent = try FakeIIOAgent(
            spec: Self.board(),
            config: Self.config(device: device, port: broker.port, iio: iio, streams: Self.rawStreamsOnly)
        )
        try await agent.explaining {
            try await subscriber.waitFor(count: 100, on: "motion/\(device)/gyroscope", timeout: 30)
            try await subscriber.waitFor(count: 10, on: "motion/\(device)/magnetometer", timeout: 30)
        }
        let override: Triple = (Self.magnetometerChip.1, Self.magnetometerChip.0, Self.magnetometerChip.2)
        for m in subscriber.messages(on: "motion/\(device)/magnetometer") {
            let b = try #require(Self.vector(m, "magneticField"))
            #expect(Self.equal(b, override, decimals: 3), "\(b) vs the override's \(override)")
        }
        #expect(subscriber.messages(on: "motion/\(device)/accelerometer").isEmpty)
        #expect(subscriber.messages(on: "motion/\(device)/altimeter").isEmpty)
        let status = try Self.lastStatus(subscriber, device)
        #expect(Self.devices(status).keys.sorted() == ["iio:device1", "iio:device2"])
        let streams = try #require(status["streams"] as? [String: [String: Any]])
        #expect(streams["accelerometer"]?["available"] as? Bool == false, "no accelerometer was selected")
        #expect(streams["accelerometer"]?["error"] is String)
        #expect(streams["magnetometer"]?["available"] as? Bool == true)
        #expect(await agent.stop() == 0)
        await subscriber.close()
    }

    @Test func anUnknownDeviceInTheListStopsTheAgentNamingWhatWasFound() async throws {
        let directory = NSTemporaryDirectory() + "motion-agent-iio-e2e-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/config.yaml"
        try Self.config(
            device: "iio-unknown",
            port: 1,
            iio: "    devices: [bmi160]",
            streams: ""
        ).write(toFile: config, atomically: true, encoding: .utf8)
        let result = try await FakeIIO.run(Self.board(), [AgentProcess.executable, "run", "--config", config])
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("no sensor device bmi160 at \"local:\""), "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "found: iio:device0 (icm42605-accel), iio:device1 (icm42605-gyro), iio:device2 (ak8975), iio:device3 (bmp280)"
            ),
            "\(result.stderr)"
        )
    }

    @Test func aVanishingDeviceShowsItsErrorInStatusAndRecovers() async throws {
        let broker = try await MosquittoBroker.started()
        let device = "iio-vanish"
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/\(device)/#"])
        // At 50 Hz the accel device disappears from sysfs after 2 s for 2 s; the gyro keeps going.
        let agent = try FakeIIOAgent(
            spec: Self.board(accelVanish: (after: 100, seconds: 2)),
            config: Self.config(
                device: device,
                port: broker.port,
                streams: """
                    streams:
                      accelerometer: {enabled: true, rate_hz: 50}
                      gyroscope: {enabled: true, rate_hz: 50}
                      magnetometer: {enabled: false}
                      device-motion: {enabled: false}
                      pedometer: {enabled: false}
                      activity: {enabled: false}
                      altimeter: {enabled: false}
                      submersion: {enabled: false}
                    metrics:
                      interval_s: 1
                    """
            )
        )
        let statusTopic = "motion/\(device)/status"
        @Sendable func accelError(_ m: InboundMessage) -> String? {
            Self.devices(payloadJSON(m))["iio:device0"]?["error"] as? String
        }
        try await agent.explaining {
            try await subscriber.waitUntil(timeout: 30, "a status with iio:device0's error") { messages in
                messages.contains { $0.topic == statusTopic && accelError($0) != nil }
            }
            try await subscriber.waitUntil(timeout: 30, "a status without the error after it") { messages in
                let statuses = messages.filter { $0.topic == statusTopic }
                guard let failed = statuses.firstIndex(where: { accelError($0) != nil }) else { return false }
                return statuses[(failed + 1)...].contains { accelError($0) == nil }
            }
        }
        let statuses = subscriber.messages(on: statusTopic)
        let failed = try #require(statuses.first { accelError($0) != nil })
        let message = try #require(accelError(failed))
        // The FIFO falls silent first (refill timeout); a retry may find the sysfs directory gone.
        #expect(message.contains("iio:device0 (icm42605-accel)") || message.contains("gone"), "\(message)")
        #expect(Self.devices(payloadJSON(failed))["iio:device1"]?["error"] == nil, "the gyro is not affected")
        // The streams that need the failed device say so; the others stay available.
        let failedStreams = try #require(payloadJSON(failed)["streams"] as? [String: [String: Any]])
        let failedAccel = failedStreams["accelerometer"] ?? [:]
        #expect(failedAccel["available"] as? Bool == false, "\(failedAccel)")
        let streamError = try #require(failedStreams["accelerometer"]?["error"] as? String)
        #expect(streamError.contains("iio:device0") && streamError.contains("resumes by itself"), "\(streamError)")
        #expect(failedStreams["gyroscope"]?["available"] as? Bool == true)
        let failedSensors = try #require(payloadJSON(failed)["sensors"] as? [String: Any])
        #expect(failedSensors["isAccelerometerAvailable"] as? Bool == false)
        #expect(failedSensors["isGyroAvailable"] as? Bool == true)
        let recovered = try #require(statuses.last { accelError($0) == nil })
        let recoveredStreams = try #require(payloadJSON(recovered)["streams"] as? [String: [String: Any]])
        #expect(recoveredStreams["accelerometer"]?["available"] as? Bool == true)
        #expect(recoveredStreams["accelerometer"]?["error"] == nil)
        // Samples resume after the recovery, with the same values.
        let before = subscriber.messages(on: "motion/\(device)/accelerometer").count
        try await agent.explaining {
            try await subscriber.waitFor(count: before + 25, on: "motion/\(device)/accelerometer", timeout: 30)
        }
        for m in subscriber.messages(on: "motion/\(device)/accelerometer") {
            let a = try #require(Self.vector(m, "acceleration"))
            #expect(Self.expectedAcceleration.contains { Self.equal(a, $0, decimals: 6) }, "\(a)")
        }
        // The metrics report counts what the acquisition met, per device.
        @Sendable func accelCounters(_ m: InboundMessage) -> [String: Any]? {
            (payloadJSON(m)["devices"] as? [String: Any])?["iio:device0"] as? [String: Any]
        }
        try await agent.explaining {
            try await subscriber.waitUntil(timeout: 10, "a metrics report counting the recovery") { messages in
                messages.contains {
                    $0.topic == "motion/\(device)/metrics" && (accelCounters($0)?["recoveries"] as? Int ?? 0) >= 1
                }
            }
        }
        let report = try #require(subscriber.messages(on: "motion/\(device)/metrics").last)
        let accel = try #require(accelCounters(report))
        let gyro = try #require((payloadJSON(report)["devices"] as? [String: Any])?["iio:device1"] as? [String: Any])
        #expect((accel["readErrors"] as? Int ?? 0) >= 1, "\(accel)")
        #expect((accel["samples"] as? Int ?? 0) > 100, "\(accel)")
        #expect((gyro["samples"] as? Int ?? 0) > (accel["samples"] as? Int ?? 0), "the gyro kept going: \(gyro)")
        #expect(gyro["readErrors"] as? Int == 0, "\(gyro)")
        #expect(await agent.stop() == 0)
        #expect(agent.runner.standardError.contains("sensor device fault"))
        #expect(agent.runner.standardError.contains("sensor device recovered"))
        await subscriber.close()
    }

    @Test func listSensorsDescribesTheFakeBoard() async throws {
        let result = try await FakeIIO.run(Self.board(), [AgentProcess.executable, "list-sensors"])
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        #expect(out.contains("context \"local:\": 4 sensor device(s)"), "\(out)")
        #expect(out.contains("iio:device0  icm42605-accel  [accelerometer]"), "\(out)")
        #expect(out.contains("iio:device1  icm42605-gyro  [gyroscope]"), "\(out)")
        #expect(out.contains("iio:device2  ak8975  [magnetometer]"), "\(out)")
        #expect(out.contains("iio:device3  bmp280  [barometer]"), "\(out)")
        #expect(out.contains("capture: buffered, no trigger needed, timestamps (monotonic clock)"), "\(out)")
        #expect(out.contains("rates (Hz): 12.5, 25, 50, 100, 200, 400, 800, 1600, now 50"), "\(out)")
        #expect(out.contains("rates (Hz): 12.5, 25, 50, 100, now 50"), "\(out)")
        #expect(out.contains("capture: polled (no buffer)"), "\(out)")
        #expect(out.contains("accel_x      → accelerometer; scale 0.004788403 m/s²/count; scan be:s16/16>>0"), "\(out)")
        #expect(out.contains("magn_y       → magnetometer; scale 0.003375 G/count"), "\(out)")
        #expect(out.contains("pressure     → altimeter; processed (_input, kPa)"), "\(out)")
        #expect(out.contains("mount matrix (magnetometer): 0, -1, 0; -1, 0, 0; 0, 0, -1  [in_mount_matrix]"), "\(out)")
    }

    @Test func listSensorsAppliesTheConfigurationsSelectionAndOverrides() async throws {
        let directory = NSTemporaryDirectory() + "motion-agent-iio-list-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/list.yaml"
        try """
        source:
          kind: iio
          iio:
            devices: [icm42605-gyro, "iio:device2"]
            mount_matrix: ["ak8975:magnetometer=0, 1, 0; 1, 0, 0; 0, 0, 1"]
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let result = try await FakeIIO.run(Self.board(), [AgentProcess.executable, "list-sensors", "--config", config])
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        #expect(out.contains("source.iio settings from \(config)"), "\(out)")
        #expect(out.contains("mount matrix (magnetometer): 0, 1, 0; 1, 0, 0; 0, 0, 1  [override]"), "\(out)")
        let unused = out.components(separatedBy: "\n").filter { $0.contains("not used: source.iio.devices") }
        #expect(unused.count == 2, "\(out)")  // the accelerometer and the barometer
        let sections = out.components(separatedBy: "\n\n")
        for (id, used) in [
            ("iio:device0", false), ("iio:device1", true), ("iio:device2", true), ("iio:device3", false),
        ] {
            let section = try #require(sections.first { $0.hasPrefix(id + " ") }, "\(out)")
            #expect(section.contains("not used:") == !used, "\(id): \(section)")
        }

        let typo = directory + "/typo.yaml"
        try "source:\n  iio:\n    devices: [bmi999]\n".write(toFile: typo, atomically: true, encoding: .utf8)
        let refused = try await FakeIIO.run(Self.board(), [AgentProcess.executable, "list-sensors", "--config", typo])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("no sensor device bmi999"), "\(refused.stderr)")
    }

    @Test func recordInTheTreeThenReplayThroughTheAgentGivesTheSameValues() async throws {
        let directory = NSTemporaryDirectory() + "motion-agent-iio-record-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/record.yaml"
        try "source:\n  kind: iio\n  iio:\n    uri: \"local:\"\n".write(
            toFile: config,
            atomically: true,
            encoding: .utf8
        )
        let csv = directory + "/board.csv"

        // Default rate: the highest each device lists at or below 200 Hz (accel 200, gyro its maximum 100).
        let result = try await FakeIIO.run(
            Self.board(),
            [AgentProcess.executable, "record", "--duration", "2", "--output", csv, "--config", config]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try #require(result.stderr.split(separator: "\n").last { $0.contains("recorded") })
        #expect(summary.contains("iio:device0 at 200 Hz, iio:device1 at 100 Hz"), "\(summary)")
        let recording = try Recording(contentsOf: csv)
        let recorded = recording.summary
        #expect(recorded.sensors == [.accelerometer, .gyroscope, .magnetometer, .barometer])
        #expect(recorded.rateHz(of: .accelerometer) == 200)
        #expect(recorded.rateHz(of: .gyroscope) == 100)
        let accelRows = recording.samples.filter { $0.acceleration != nil }
        #expect(summary.contains("accelerometer \(accelRows.count),"), "\(summary)")
        // The 2 s run from the command's start, so a loaded host that takes longer to open and enable the devices
        // records fewer rows (216 on the CI machine, 400 at most). What must hold is that every row between the
        // first and the last is there or accounted for: the fake device stamps its records 5 ms apart, and a
        // sample that arrives more than the writer's reorder window (1 s) behind another device's is left out and
        // counted in the summary's "late samples left out" (40 busy loops on this 2-core host: 185 of them).
        #expect(accelRows.count >= 100, "2 s at 200 Hz, \(accelRows.count) rows")
        let steps = zip(accelRows.dropFirst(), accelRows).map { $0.timestamp - $1.timestamp }
        let missing = steps.reduce(0) { $0 + Int(($1 / 0.005).rounded()) - 1 }
        #expect(
            steps.allSatisfy { abs($0 / 0.005 - ($0 / 0.005).rounded()) < 1e-6 && $0 > 0 },
            "\(Set(steps).sorted())"
        )
        let late = summary.firstMatch(of: /; (\d+) late samples left out/).flatMap { Int($0.1) } ?? 0
        #expect(missing <= late, "\(missing) accelerometer rows missing, \(late) reported late: \(summary)")
        // The file holds full precision: exact to the last bits of the arithmetic, not the wire's rounding.
        for s in recording.samples {
            if let a = s.acceleration {
                #expect(Self.expectedAcceleration.contains { Self.equal((a.x, a.y, a.z), $0, decimals: 12) }, "\(a)")
            }
            if let w = s.rotationRate {
                #expect(Self.expectedRotationRate.contains { Self.equal((w.x, w.y, w.z), $0, decimals: 12) }, "\(w)")
            }
            if let b = s.magneticField {
                #expect(Self.equal((b.x, b.y, b.z), Self.expectedMagneticField, decimals: 9), "\(b)")
            }
            if let p = s.pressureKPa { #expect(abs(p - 100.125) < 1e-12) }
        }
        #expect(recording.samples.contains { $0.temperatureC.map { abs($0 - 23.5) < 1e-9 } ?? false }, "bmp280 23.5 °C")

        // --rate: the lowest rate each device lists at or above it.
        let slow = directory + "/slow.csv"
        let slowResult = try await FakeIIO.run(
            Self.board(),
            [
                AgentProcess.executable, "record", "--duration", "1", "--rate", "30", "--output", slow, "--config",
                config,
            ]
        )
        #expect(slowResult.status == 0, "\(slowResult.stderr)")
        #expect(try Recording(contentsOf: slow).summary.rateHz(of: .accelerometer) == 50)

        // Replay the file through the agent at its recorded pace: the same values on MQTT.
        let broker = try await MosquittoBroker.started()
        let device = "iio-replay"
        let subscriber = try await CapturingSubscriber(broker: broker, filters: ["motion/\(device)/#"])
        let agent = try AgentProcess(
            config: """
                device:
                  id: \(device)
                agent:
                  state_dir: state
                source:
                  kind: replay
                  replay:
                    file: \(csv)
                    speed: realtime
                mqtt:
                  host: 127.0.0.1
                  port: \(broker.port)
                  keepalive: 5
                streams:
                  accelerometer: {enabled: true, rate_hz: 200}
                  gyroscope: {enabled: true, rate_hz: 100}
                  magnetometer: {enabled: true, rate_hz: 10}
                  device-motion: {enabled: false}
                  pedometer: {enabled: false}
                  activity: {enabled: false}
                  altimeter: {enabled: false}
                  submersion: {enabled: false}
                """
        )
        defer { agent.runner.kill() }
        try await subscriber.waitFor(
            count: min(200, accelRows.count),
            on: "motion/\(device)/accelerometer",
            timeout: 30
        )
        try await subscriber.waitFor(count: 5, on: "motion/\(device)/magnetometer", timeout: 30)
        let byTime = Dictionary(
            accelRows.map { ($0.timestamp, $0.acceleration!) },
            uniquingKeysWith: { first, _ in first }
        )
        let times = byTime.keys.sorted()
        for m in subscriber.messages(on: "motion/\(device)/accelerometer") {
            let object = payloadJSON(m)
            let a = try #require(Self.vector(m, "acceleration"))
            let t = try #require(object["timestamp"] as? Double)
            // The row with this timestamp (the wire rounds timestamps too), and its very values.
            let nearest = try #require(times.min { abs($0 - t) < abs($1 - t) })
            #expect(abs(nearest - t) < 1e-3, "a row at \(t) s")
            let row = byTime[nearest]!
            #expect(Self.equal(a, (row.x, row.y, row.z), decimals: 6), "\(a) vs the row's \(row)")
        }
        for m in subscriber.messages(on: "motion/\(device)/magnetometer") {
            let b = try #require(Self.vector(m, "magneticField"))
            #expect(Self.equal(b, Self.expectedMagneticField, decimals: 3), "\(b)")
        }
        agent.runner.terminate()
        #expect(await agent.runner.waitForExit(timeout: 20) == 0)
        await subscriber.close()

        // Recording the replay as fast as it plays gives the same rows, byte for byte: every value survives
        // the text round trip.
        let fast = directory + "/replay-fast.yaml"
        try "source:\n  kind: replay\n  replay:\n    file: \(csv)\n    speed: fast\n"
            .write(toFile: fast, atomically: true, encoding: .utf8)
        let copy = directory + "/copy.csv"
        let rerecord = ProcessRunner(
            executable: AgentProcess.executable,
            arguments: ["record", "--duration", "30", "--output", copy, "--config", fast]
        )
        try rerecord.start()
        #expect(await rerecord.waitForExit(timeout: 60) == 0, "\(rerecord.standardError)")
        #expect(try String(contentsOfFile: copy, encoding: .utf8) == String(contentsOfFile: csv, encoding: .utf8))
    }
}
