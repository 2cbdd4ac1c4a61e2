import Foundation
import MotionModel
import TestSupport
import Testing

/// The whole chain against fake devices that libiio's local backend (and iiod) read exactly like hardware.
/// They need root (or CAP_SYS_ADMIN) for a private mount namespace; without it they fail and say so.
@Suite("IIO devices through libiio (fake sysfs tree)", .timeLimit(.minutes(5)), .serialized)
struct FakeIIOTests {
    static let g = 9.80665

    func run(_ spec: FakeIIOSpec, iiod: Bool = false, _ arguments: [String]) async throws -> FakeIIOResult {
        let probe = try FakeIIO.builtProduct("IIOProbe")
        let result = try await FakeIIO.run(spec, iiod: iiod, [probe] + arguments)
        #expect(
            result.status != 3,
            "the fake IIO fixture could not be set up: \(result.stderr) — run the tests as root or with CAP_SYS_ADMIN"
        )
        return result
    }

    static let bmi160Records: [[Int64]] = [
        // gyro x, y, z, accel x, y, z (counts)
        [100, -200, 300, 1000, -2000, 16384],
        [-5, 7, 0, -16384, 12, 8],
        [32767, -32768, 1, 0, 0, 0],
    ]

    // MARK: - Discovery

    @Test("discovery: bmi160, icm42600 accel + gyro, ak8975, bmp280 — sensors, rates, triggers, matrices")
    func discovery() async throws {
        let spec = FakeIIOSpec(devices: [
            FakeIIOModels.bmi160(id: "iio:device0", records: Self.bmi160Records),
            FakeIIOModels.icm42600(kind: .accel, id: "iio:device1", records: [[1, 2, 3, 4]]),
            FakeIIOModels.icm42600(kind: .gyro, id: "iio:device2", records: [[1, 2, 3, 4]]),
            FakeIIOModels.ak8975(id: "iio:device3", raw: (1, 2, 3)),
            FakeIIOModels.bmp280(id: "iio:device4", pressureKPa: "100.5", temperatureMilliC: "21000"),
        ])
        let result = try await run(spec, ["list"])
        #expect(result.status == 0, "\(result.stderr)")
        let devices = Dictionary(
            uniqueKeysWithValues: result.lines("device").map { line in
                (
                    line[1],
                    Dictionary(
                        uniqueKeysWithValues: line.dropFirst(2).map { field in
                            let kv = field.split(separator: "=", maxSplits: 1).map(String.init)
                            return (kv[0], kv.count > 1 ? kv[1] : "")
                        }
                    )
                )
            }
        )
        #expect(devices.count == 5)
        #expect(devices["iio:device0"]?["name"] == "bmi160")
        #expect(devices["iio:device0"]?["sensors"] == "accelerometer,gyroscope")
        #expect(devices["iio:device0"]?["rates"] == "list([25.0, 50.0, 100.0, 200.0, 400.0, 800.0, 1600.0])")
        #expect(devices["iio:device0"]?["buffered"] == "1")
        #expect(devices["iio:device0"]?["trigger"] == "bmi160-dev0")
        #expect(devices["iio:device0"]?["source.accelerometer"] == "in_accel_mount_matrix")
        #expect(devices["iio:device1"]?["name"] == "icm42605-accel")
        #expect(devices["iio:device1"]?["sensors"] == "accelerometer")
        #expect(devices["iio:device1"]?["rates"] == "list([12.5, 25.0, 50.0, 100.0, 200.0, 400.0, 800.0, 1600.0])")
        #expect(devices["iio:device1"]?["trigger"] == "-")
        #expect(devices["iio:device1"]?["clock"] == "monotonic")
        #expect(devices["iio:device1"]?["source.accelerometer"] == "mount_matrix")
        #expect(devices["iio:device2"]?["sensors"] == "gyroscope")
        #expect(devices["iio:device3"]?["sensors"] == "magnetometer")
        #expect(devices["iio:device3"]?["buffered"] == "0")
        #expect(devices["iio:device3"]?["matrix.magnetometer"] == "0, -1, 0; -1, 0, 0; 0, 0, -1")
        #expect(devices["iio:device3"]?["source.magnetometer"] == "in_mount_matrix")
        #expect(devices["iio:device4"]?["sensors"] == "barometer")
        #expect(devices["iio:device4"]?["rates"] == "range(min: 0.1, step: 0.0, max: 100.0)")
        let channels = result.lines("channel")
        #expect(
            channels.contains {
                $0[1] == "iio:device1" && $0[2] == "accel_x" && $0[5] == "scale=0.004788403"
                    && $0[7] == "format=be:s16/16>>0"
            }
        )
        #expect(channels.contains { $0[1] == "iio:device1" && $0[2] == "temp" && $0[6] == "offset=3311.986611" })
        #expect(channels.contains { $0[1] == "iio:device3" && $0[2] == "magn_y" && $0[5] == "scale=0.003375" })
        #expect(result.lines("hasIMU").first?[1] == "1")
    }

    @Test("a configured mount matrix overrides the driver's")
    func override() async throws {
        let spec = FakeIIOSpec(devices: [FakeIIOModels.ak8975(id: "iio:device0", raw: (1, 2, 3))])
        let result = try await run(spec, ["list", "--override", "ak8975/magnetometer=1, 0, 0; 0, -1, 0; 0, 0, -1"])
        #expect(result.status == 0, "\(result.stderr)")
        let device = try #require(result.lines("device").first)
        #expect(device.contains("matrix.magnetometer=1, 0, 0; 0, -1, 0; 0, 0, -1"))
        #expect(device.contains("source.magnetometer=override"))
    }

    // MARK: - Exact values

    @Test("bmi160 buffered: counts → g (Core Motion sign) and rad/s through the mount matrix, exact timestamps")
    func bmi160Values() async throws {
        let accelMatrix = "0, 1, 0; 1, 0, 0; 0, 0, -1"
        let spec = FakeIIOSpec(devices: [
            FakeIIOModels.bmi160(records: Self.bmi160Records, accelMatrix: accelMatrix)
        ])
        let result = try await run(
            spec,
            [
                "capture", "--plan", "iio:device0=100:accelerometer,gyroscope", "--want", "acc=9",
                "--show", "/sys/bus/iio/devices/iio:device0/trigger/current_trigger",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        #expect(out.samples.count >= 9)
        #expect(out.files["/sys/bus/iio/devices/iio:device0/trigger/current_trigger"] == "bmi160-dev0")
        for (k, sample) in out.samples.prefix(9).enumerated() {
            let r = Self.bmi160Records[k % 3].map(Double.init)
            // Chip axes → board axes: (y, x, −z), then −(m/s²)/g.
            let accel = Vector3(r[4] * 0.000598, r[3] * 0.000598, -r[5] * 0.000598) * (-1 / Self.g)
            let gyro = Vector3(r[0] * 0.001065, r[1] * 0.001065, r[2] * 0.001065)
            #expect(
                close(sample.acceleration, accel),
                "sample \(k): \(String(describing: sample.acceleration)) vs \(accel)"
            )
            #expect(close(sample.rotationRate, gyro), "sample \(k)")
            // The fake's timestamps are 1 s + k × 10 ms on CLOCK_MONOTONIC.
            #expect(close(sample.timestamp, Double(1_000_000_000 + Int64(k) * 10_000_000) * 1e-9), "sample \(k)")
        }
        // Record 2 holds ±32767/−32768: clipped readings are counted and still delivered.
        #expect(Int(out.status["iio:device0"]?["saturated"] ?? "0") ?? 0 >= 3)
        // A device at rest on its back reads (0, 0, +1 g) in Core Motion's convention.
        #expect(close(out.samples[0].acceleration?.z ?? 0, 16384 * 0.000598 / Self.g))
    }

    @Test("icm42600 accel + gyro devices: big-endian scans, temperature, shared timestamps for pairing")
    func icm42600Pair() async throws {
        let matrix = "0, -1, 0; 1, 0, 0; 0, 0, 1"
        let accelRecords: [[Int64]] = [[0, 0, 2048, 100], [-2048, 512, 0, -250]]
        let gyroRecords: [[Int64]] = [[10, -20, 30, 100], [0, 16, -16, -250]]
        let spec = FakeIIOSpec(devices: [
            FakeIIOModels.icm42600(kind: .accel, id: "iio:device0", records: accelRecords, matrix: matrix),
            FakeIIOModels.icm42600(kind: .gyro, id: "iio:device1", records: gyroRecords, matrix: matrix),
        ])
        let result = try await run(
            spec,
            [
                "capture", "--plan", "iio:device0=100:accelerometer", "--plan", "iio:device1=100:gyroscope",
                "--want", "acc=6,gyro=6",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        let accel = out.samples.filter { $0.acceleration != nil }
        let gyro = out.samples.filter { $0.rotationRate != nil }
        #expect(accel.allSatisfy { $0.rotationRate == nil })
        for (k, s) in accel.prefix(6).enumerated() {
            let r = accelRecords[k % 2].map(Double.init)
            let board = Vector3(-r[1], r[0], r[2]) * 0.004788403
            #expect(close(s.acceleration, board * (-1 / Self.g)), "accel \(k)")
            #expect(close(s.temperatureC ?? .nan, (r[3] + 3311.986611) * 7.548309 / 1000), "temp \(k)")
        }
        for (k, s) in gyro.prefix(6).enumerated() {
            let r = gyroRecords[k % 2].map(Double.init)
            #expect(close(s.rotationRate, Vector3(-r[1], r[0], r[2]) * 0.001065264), "gyro \(k)")
        }
        // Both devices sample on one clock: every gyro instant has its accel twin.
        let accelTimes = Set(accel.map(\.timestamp))
        #expect(gyro.prefix(6).allSatisfy { accelTimes.contains($0.timestamp) })
        #expect(out.status["iio:device0"]?["rate"] == "100.0")
    }

    @Test("scan types: 12-bit left-justified signed (bmc150), unsigned big-endian with an offset")
    func scanTypes() async throws {
        // Negative 12-bit counts exercise the sign extension after the shift.
        let accelRecords: [[Int64]] = [[-2048, 2047, 1024], [-1, 0, -1000]]
        let magRecords: [[Int64]] = [[65535, 0, 32768], [40000, 30000, 32769]]
        let spec = FakeIIOSpec(devices: [
            FakeIIOModels.bmc150(id: "iio:device0", records: accelRecords),
            FakeIIOModels.unsignedMagnetometer(id: "iio:device1", records: magRecords),
        ])
        let result = try await run(
            spec,
            [
                "capture", "--plan", "iio:device0=125:accelerometer", "--plan", "iio:device1=50:magnetometer",
                "--want", "acc=4,mag=4",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        for (k, s) in out.samples.filter({ $0.acceleration != nil }).prefix(4).enumerated() {
            let r = accelRecords[k % 2].map(Double.init)
            #expect(close(s.acceleration, Vector3(r[0], r[1], r[2]) * (0.009582 * -1 / Self.g)), "accel \(k)")
        }
        for (k, s) in out.samples.filter({ $0.magneticField != nil }).prefix(4).enumerated() {
            let r = magRecords[k % 2].map { (Double($0) - 32768) * 0.0009765625 * 100 }
            #expect(close(s.magneticField, Vector3(r[0], r[1], r[2])), "mag \(k)")
        }
        // −2048 and 2047 are the 12-bit limits; 65535 and (unsigned) only the top counts as clipped.
        #expect(out.status["iio:device0"]?["saturated"].flatMap(Int.init) ?? 0 >= 2)
        #expect(out.status["iio:device1"]?["saturated"].flatMap(Int.init) ?? 0 >= 2)
        #expect(out.status["iio:device1"]?["rate"] == "50.0")
    }

    @Test("polled ak8975 and bmp280: per-axis scales, in_mount_matrix, Gauss → µT, kPa, m°C → °C")
    func polledDevices() async throws {
        let spec = FakeIIOSpec(devices: [
            FakeIIOModels.ak8975(id: "iio:device0", raw: (120, -45, 300)),
            FakeIIOModels.bmp280(id: "iio:device1", pressureKPa: "101.325000000", temperatureMilliC: "23450"),
        ])
        let result = try await run(
            spec,
            [
                "capture", "--plan", "iio:device0=20:magnetometer", "--plan", "iio:device1=10:barometer",
                "--want", "mag=3,baro=3",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        let chip = Vector3(120 * 0.003363, -45 * 0.003375, 300 * 0.003234)
        let board = Vector3(-chip.y, -chip.x, -chip.z) * 100
        let mags = out.samples.filter { $0.magneticField != nil }
        #expect(mags.count >= 3)
        #expect(mags.allSatisfy { close($0.magneticField, board) })
        let baros = out.samples.filter { $0.pressureKPa != nil }
        #expect(baros.allSatisfy { $0.pressureKPa == 101.325 && $0.temperatureC == 23.45 })
        #expect(baros.allSatisfy { $0.magneticField == nil })
        #expect(out.status["iio:device0"]?["rate"] == "20.0")
    }

    @Test("a triggered device with no trigger to use falls back to polling _raw (saturation still counted)")
    func triggerlessFallsBackToPolling() async throws {
        // A bmi160 whose interrupt line is not wired: a triggered buffer, no trigger, and a current_trigger of
        // 0 bytes (libiio 0.24 reads it as EIO).
        var imu = FakeIIOModels.bmi160(records: Self.bmi160Records)
        imu.trigger = nil
        imu.attrs["trigger/current_trigger"] = ""
        imu.attrs["in_accel_x_raw"] = "1234"
        imu.attrs["in_accel_y_raw"] = "-2345"
        imu.attrs["in_accel_z_raw"] = "32767"
        let result = try await run(
            FakeIIOSpec(devices: [imu]),
            [
                "capture", "--plan", "iio:device0=50:accelerometer", "--want", "acc=3",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        let samples = out.samples
        #expect(samples.count >= 3)
        // accel_z reads the s16 maximum: clipped, counted, delivered.
        #expect(out.status["iio:device0"]?["saturated"] == out.status["iio:device0"]?["samples"])
        #expect(samples.allSatisfy { close($0.acceleration, Vector3(1234, -2345, 32767) * (0.000598 * -1 / Self.g)) })
    }

    // MARK: - Rates

    @Test("rates: lowest supported at or above the request, clamped, written to sampling_frequency (list)")
    func rateList() async throws {
        let spec = FakeIIOSpec(devices: [
            FakeIIOModels.bmi160(id: "iio:device0", records: Self.bmi160Records),
            FakeIIOModels.icm42600(kind: .accel, id: "iio:device1", records: [[1, 2, 3, 4]]),
        ])
        let base = "/sys/bus/iio/devices/"
        let result = try await run(
            spec,
            [
                "capture", "--plan", "iio:device0=130:accelerometer,gyroscope", "--plan",
                "iio:device1=5000:accelerometer",
                "--want", "acc=40",
                "--show", base + "iio:device0/in_accel_sampling_frequency",
                "--show", base + "iio:device0/in_anglvel_sampling_frequency",
                "--show", base + "iio:device1/sampling_frequency",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        #expect(out.files[base + "iio:device0/in_accel_sampling_frequency"] == "200")
        #expect(out.files[base + "iio:device0/in_anglvel_sampling_frequency"] == "200")
        #expect(out.status["iio:device0"]?["rate"] == "200.0")
        #expect(out.files[base + "iio:device1/sampling_frequency"] == "1600")
        #expect(out.status["iio:device1"]?["rate"] == "1600.0")
    }

    @Test("rates: a [min step max] range")
    func rateRange() async throws {
        let spec = FakeIIOSpec(devices: [
            FakeIIOModels.icm42600(kind: .accel, id: "iio:device0", records: [[1, 2, 3, 4]], available: "[25 25 1600]")
        ])
        let path = "/sys/bus/iio/devices/iio:device0/sampling_frequency"
        let result = try await run(
            spec,
            [
                "capture", "--plan", "iio:device0=130:accelerometer", "--want", "acc=5", "--show", path,
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        #expect(out.files[path] == "150")
        #expect(out.status["iio:device0"]?["rate"] == "150.0")
    }

    @Test("a device planned off has its buffer disabled while the others keep running")
    func planOff() async throws {
        let spec = FakeIIOSpec(devices: [
            FakeIIOModels.icm42600(kind: .accel, id: "iio:device0", records: [[1, 2, 3, 4]]),
            FakeIIOModels.icm42600(kind: .gyro, id: "iio:device1", records: [[1, 2, 3, 4]]),
        ])
        let base = "/sys/bus/iio/devices/"
        let result = try await run(
            spec,
            [
                "capture", "--plan", "iio:device0=100:accelerometer", "--plan", "iio:device1=100:gyroscope",
                "--replan-after", "10", "--plan2", "iio:device0=100:accelerometer", "--want", "acc=20",
                "--show", base + "iio:device0/buffer/enable", "--show", base + "iio:device1/buffer/enable",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        #expect(out.files[base + "iio:device0/buffer/enable"] == "1")
        #expect(out.files[base + "iio:device1/buffer/enable"] == "0")
        #expect(out.status["iio:device1"]?["state"] == "off")
    }

    // MARK: - Timestamps

    @Test("without in_timestamp, each refill is spread evenly up to its completion; none dropped")
    func interpolatedTimestamps() async throws {
        let spec = FakeIIOSpec(devices: [
            FakeIIOModels.bmi160(records: Self.bmi160Records, withTimestamp: false)
        ])
        let result = try await run(spec, ["capture", "--plan", "iio:device0=1600:accelerometer", "--want", "acc=320"])
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        let times = out.samples.map(\.timestamp)
        #expect(times.count >= 320)
        #expect(zip(times.dropFirst(), times).allSatisfy { $0 > $1 })
        #expect(out.status["iio:device0"]?["backwards"] == "0")
        // The first refill (32 samples at 1.6 kHz) has no predecessor: it is laid out at the nominal period.
        let first = zip(times.dropFirst().prefix(31), times.prefix(31)).map { $0 - $1 }
        #expect(first.allSatisfy { abs($0 - 1 / 1600.0) < 1e-9 }, "\(first)")
    }

    @Test("a realtime current_timestamp_clock is mapped onto CLOCK_MONOTONIC, the time base all devices share")
    func realtimeClock() async throws {
        func now(_ clock: clockid_t) -> Double {
            var ts = timespec()
            clock_gettime(clock, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
        }
        var accel = FakeIIOModels.icm42600(kind: .accel, id: "iio:device0", records: [[1, 2, 3, 4]], clock: "realtime")
        accel.t0_ns = Int64(now(CLOCK_REALTIME) * 1e9)
        let before = now(CLOCK_MONOTONIC)
        let result = try await run(
            FakeIIOSpec(devices: [accel]),
            [
                "capture", "--plan", "iio:device0=100:accelerometer", "--want", "acc=5",
            ]
        )
        let after = now(CLOCK_MONOTONIC)
        #expect(result.status == 0, "\(result.stderr)")
        let times = ProbeOutput(result).samples.map(\.timestamp)
        #expect(times.count >= 5)
        // Sampled during the run, so on the monotonic clock they fall inside it.
        #expect(
            times.allSatisfy { $0 >= before - 1 && $0 <= after + 1 },
            "\(times.prefix(3)) not in \(before)…\(after)"
        )
        // 10 ms apart to the resolution of a double holding nanoseconds since 1970 (~0.24 µs).
        #expect(zip(times.dropFirst(), times).allSatisfy { abs($0 - $1 - 0.01) < 1e-6 })
    }

    @Test("garbage: timestamps going backwards are dropped and counted; NaN is dropped and counted")
    func garbage() async throws {
        var imu = FakeIIOModels.bmi160(records: Self.bmi160Records)
        imu.jumpTimestamps(at: 10, deltaNs: -50_000_000)
        let spec = FakeIIOSpec(devices: [
            imu, FakeIIOModels.bmp280(id: "iio:device1", pressureKPa: "nan", temperatureMilliC: "21000"),
        ])
        let result = try await run(
            spec,
            [
                "capture", "--plan", "iio:device0=100:accelerometer", "--plan", "iio:device1=20:barometer",
                "--want", "acc=30", "--max-seconds", "10",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        let times = out.samples.filter { $0.acceleration != nil }.map(\.timestamp)
        #expect(zip(times.dropFirst(), times).allSatisfy { $0 > $1 })
        // Records 10–14 fall at or before record 9's time.
        #expect(out.status["iio:device0"]?["backwards"] == "5")
        // The clock stepped back 50 ms at record 10, so once the five stale records are dropped the stream
        // goes on seamlessly at 10 ms.
        for (k, t) in times.prefix(30).enumerated() {
            #expect(close(t, Double(1_000_000_000 + Int64(k) * 10_000_000) * 1e-9), "sample \(k)")
        }
        #expect(Int(out.status["iio:device1"]?["nonfinite"] ?? "0") ?? 0 > 0)
        #expect(out.samples.allSatisfy { $0.pressureKPa == nil })
    }

    @Test("a timestamp channel stuck at its first value (hid-sensor-press): timed on arrival from then on")
    func frozenTimestamps() async throws {
        var imu = FakeIIOModels.bmi160(records: Self.bmi160Records)
        // Each record's shift cancels its own 10 ms step: every scan carries the first one's timestamp, as
        // Linux 6.1's hid-sensor-press writes them (found in the system test's VM).
        for k in 1...2000 { imu.jumpTimestamps(at: k, deltaNs: -10_000_000) }
        let result = try await run(
            FakeIIOSpec(devices: [imu]),
            ["capture", "--plan", "iio:device0=100:accelerometer", "--want", "acc=60", "--max-seconds", "10"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        let times = out.samples.filter { $0.acceleration != nil }.map(\.timestamp)
        #expect(times.count >= 60)
        #expect(zip(times.dropFirst(), times).allSatisfy { $0 > $1 })
        // Only the repeat before the switch (the second identical timestamp) is dropped.
        #expect(out.status["iio:device0"]?["backwards"] == "1")
    }

    // MARK: - Faults

    @Test("a device that vanishes is reported, retried, and resumes by itself; the other keeps delivering")
    func vanishAndReturn() async throws {
        var gyro = FakeIIOModels.icm42600(kind: .gyro, id: "iio:device1", records: [[1, 2, 3, 4]])
        gyro.vanish(after: 30, seconds: 2.5)
        let spec = FakeIIOSpec(devices: [
            FakeIIOModels.icm42600(kind: .accel, id: "iio:device0", records: [[5, 6, 7, 8]]), gyro,
        ])
        let result = try await run(
            spec,
            [
                "capture", "--plan", "iio:device0=100:accelerometer", "--plan", "iio:device1=100:gyroscope",
                "--recoveries", "1", "--want", "gyro=50", "--max-seconds", "30", "--refill-timeout", "1",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        let failed = try #require(out.faults.first { $0.device == "iio:device1" && !$0.recovered })
        let recovered = try #require(out.faults.first { $0.device == "iio:device1" && $0.recovered })
        #expect(failed.line < recovered.line)
        #expect(failed.message.contains("iio:device1"))
        #expect(!out.faults.contains { $0.device == "iio:device0" })
        let during = out.samples.filter { $0.line > failed.line && $0.line < recovered.line }
        #expect(during.contains { $0.acceleration != nil })
        #expect(!during.contains { $0.rotationRate != nil })
        let after = out.samples.filter { $0.line > recovered.line && $0.rotationRate != nil }
        #expect(!after.isEmpty)
        // The fake resumes where it stopped: record 30's timestamp follows record 29's.
        let gyroTimes = out.samples.filter { $0.rotationRate != nil }.map(\.timestamp)
        #expect(gyroTimes.contains { close($0, 1.30) })
        #expect(out.status["iio:device1"]?["recoveries"] == "1")
    }

    // MARK: - Network

    @Test("iiod serving the fake tree: discovery and exact values through the ip: backend")
    func throughIIOD() async throws {
        let spec = FakeIIOSpec(devices: [
            FakeIIOModels.bmi160(records: Self.bmi160Records),
            FakeIIOModels.ak8975(id: "iio:device1", raw: (10, 20, 30), matrix: "1, 0, 0; 0, 1, 0; 0, 0, 1"),
        ])
        let uri = "ip:127.0.0.1:{IIOD_PORT}"
        let listing = try await run(spec, iiod: true, ["list", "--uri", uri])
        #expect(listing.status == 0, "\(listing.stderr)")
        #expect(listing.lines("device").map { $0[2] } == ["name=bmi160", "name=ak8975"])
        let result = try await run(
            spec,
            iiod: true,
            [
                "capture", "--uri", uri, "--plan", "iio:device0=100:accelerometer,gyroscope",
                "--plan", "iio:device1=10:magnetometer", "--want", "acc=6,mag=2",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let out = ProbeOutput(result)
        for (k, s) in out.samples.filter({ $0.acceleration != nil }).prefix(6).enumerated() {
            let r = Self.bmi160Records[k % 3].map(Double.init)
            #expect(close(s.acceleration, Vector3(r[3], r[4], r[5]) * (0.000598 * -1 / Self.g)), "sample \(k)")
            #expect(close(s.timestamp, Double(1_000_000_000 + Int64(k) * 10_000_000) * 1e-9))
        }
        let mag = try #require(out.samples.first { $0.magneticField != nil })
        #expect(close(mag.magneticField, Vector3(10 * 0.003363, 20 * 0.003375, 30 * 0.003234) * 100))
    }
}
