import CBenchSupport
import Foundation
import MotionModel
import Simulation

extension RealisticLoad {
    /// The fake IIO tree of the 'iio' input, in the spec format of Tests/Fixtures/iio/fake_iio.py: a 9-axis
    /// board as the kernel shows it, every value from a simulated walk.
    ///
    /// - iio:device0 / iio:device1: inv_icm42600 accelerometer and gyroscope, two devices fed by one FIFO
    ///   (drivers/iio/imu/inv_icm42600: big-endian s16 x, y, z, temperature, timestamp; ±16 g =
    ///   0.004788403 m/s²/count, ±2000 °/s = 0.001065264 rad/s/count). They offer only 1000 Hz: the load is
    ///   defined as a 1 kHz input, and with the driver's whole list the agent would rightly run them at the
    ///   100 Hz the streams need. The agent reads them through libiio buffers (20 samples a refill at 1 kHz).
    /// - iio:device2: ak8975 magnetometer, no buffer without a trigger, so polled (`in_magn_*_raw`) at the
    ///   rate device motion asks, 100 Hz; a constant field (sysfs files hold one value).
    /// - iio:device3: bmp280 barometer, polled (`in_pressure_input`, `in_temp_input`); constant.
    ///
    /// `seconds` of records at 1 kHz are cycled by the fake's writers; timestamps start at the monotonic
    /// clock's now, so the agent's sample times are live ones.
    static func writeIIOSpec(to path: String, seconds: Double) throws {
        let rateHz = 1000.0
        let accelScale = 0.004788403  // m/s² per count
        let gyroScale = 0.001065264  // rad/s per count
        let recording = SimulatedRecording(
            imu: SimulatedIMU(scenario: .walking, seed: 9, nominalRateHz: rateHz),
            rateHz: rateHz,
            duration: seconds
        )
        var accel: [[Int]] = []
        var gyro: [[Int]] = []
        var field = Vector3(20, 0, -40)
        var pressureKPa = 101.325
        var first = true
        for (sample, _) in recording {
            // The agent turns m/s² into g with Core Motion's sign: a_g = −a / g0, so a = −a_g · g0.
            if let a = sample.acceleration {
                accel.append(Self.counts(a * -standardGravity, scale: accelScale) + [0])
            }
            if let w = sample.rotationRate { gyro.append(Self.counts(w, scale: gyroScale) + [0]) }
            if first, let m = sample.magneticField { field = m }
            if first, let p = sample.pressureKPa { pressureKPa = p }
            first = false
        }
        let t0 = Int64(bench_monotonic_ns())
        func icm42600(
            _ id: String,
            _ type: String,
            _ name: String,
            _ scale: Double,
            _ records: [[Int]]
        ) -> [String: Any] {
            [
                "id": id, "name": name,
                "attrs": [
                    "in_\(type)_scale": String(scale),
                    "in_\(type)_x_raw": "0", "in_\(type)_y_raw": "0", "in_\(type)_z_raw": "0",
                    "in_temp_raw": "0", "in_temp_scale": "7.548309", "in_temp_offset": "3311.986611",
                    "sampling_frequency": "1000",
                    "sampling_frequency_available": "1000.000000",
                    "mount_matrix": "1, 0, 0; 0, 1, 0; 0, 0, 1",
                    "current_timestamp_clock": "monotonic",
                ],
                "scan": [
                    ["name": "in_\(type)_x", "index": 0, "type": "be:s16/16>>0"],
                    ["name": "in_\(type)_y", "index": 1, "type": "be:s16/16>>0"],
                    ["name": "in_\(type)_z", "index": 2, "type": "be:s16/16>>0"],
                    ["name": "in_temp", "index": 3, "type": "le:s16/16>>0"],
                    ["name": "in_timestamp", "index": 4, "type": "le:s64/64>>0"],
                ],
                "buffer_attrs": ["watermark": "1", "hwfifo_enabled": "0"],
                "records": records,
                "t0_ns": t0,
            ]
        }
        // ak8975: (ASA + 128) × 3000 / 256 µG per count; µT = G × 100. Identity mount matrix.
        let magnScale = (0.003363, 0.003375, 0.003234)  // G per count
        let magnRaw = (
            Int((field.x / 100 / magnScale.0).rounded()), Int((field.y / 100 / magnScale.1).rounded()),
            Int((field.z / 100 / magnScale.2).rounded())
        )
        let spec: [String: Any] = [
            "devices": [
                icm42600("iio:device0", "accel", "icm42605-accel", accelScale, accel),
                icm42600("iio:device1", "anglvel", "icm42605-gyro", gyroScale, gyro),
                [
                    "id": "iio:device2", "name": "ak8975",
                    "attrs": [
                        "in_magn_x_raw": "\(magnRaw.0)", "in_magn_y_raw": "\(magnRaw.1)",
                        "in_magn_z_raw": "\(magnRaw.2)",
                        "in_magn_x_scale": "\(magnScale.0)", "in_magn_y_scale": "\(magnScale.1)",
                        "in_magn_z_scale": "\(magnScale.2)",
                        "in_mount_matrix": "1, 0, 0; 0, 1, 0; 0, 0, 1",
                    ],
                ],
                [
                    "id": "iio:device3", "name": "bmp280",
                    "attrs": [
                        "in_pressure_input": String(format: "%.9f", pressureKPa),
                        "in_temp_input": "25000",
                        "in_pressure_oversampling_ratio": "16",
                        "in_pressure_oversampling_ratio_available": "1 2 4 8 16",
                        "in_temp_oversampling_ratio": "2",
                        "in_temp_oversampling_ratio_available": "1 2 4 8 16",
                    ],
                ],
            ]
        ]
        let data = try JSONSerialization.data(withJSONObject: spec)
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// A vector as s16 counts at `scale` units per count, clamped to the register's range.
    private static func counts(_ v: Vector3, scale: Double) -> [Int] {
        [v.x, v.y, v.z].map { Int(min(max(($0 / scale).rounded(), -32768), 32767)) }
    }
}
