import CBenchSupport
import Foundation
import Harness
import MotionModel
import Simulation

extension RealisticLoad {
    /// The fake IIO tree of the 'iio' input, in the spec format of Sources/Harness/FakeIIOTree/fake_iio.py: a 9-axis
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
        var accel: [[Int64]] = []
        var gyro: [[Int64]] = []
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
        // The driver models the IIO tests use (Harness/FakeIIOModels), offering only the load's 1 kHz.
        let t0 = Int64(bench_monotonic_ns())
        var accelDevice = FakeIIOModels.icm42600(
            kind: .accel,
            id: "iio:device0",
            records: accel,
            available: "1000.000000"
        )
        var gyroDevice = FakeIIOModels.icm42600(kind: .gyro, id: "iio:device1", records: gyro, available: "1000.000000")
        accelDevice.t0_ns = t0
        gyroDevice.t0_ns = t0
        // ak8975: 0.003363, 0.003375, 0.003234 G per count (the model's fuse-ROM scales); µT = G × 100.
        let magnRaw = (
            Int((field.x / 100 / 0.003363).rounded()), Int((field.y / 100 / 0.003375).rounded()),
            Int((field.z / 100 / 0.003234).rounded())
        )
        let spec = FakeIIOSpec(devices: [
            accelDevice, gyroDevice,
            FakeIIOModels.ak8975(id: "iio:device2", raw: magnRaw, matrix: "1, 0, 0; 0, 1, 0; 0, 0, 1"),
            FakeIIOModels.bmp280(
                id: "iio:device3",
                pressureKPa: String(format: "%.9f", pressureKPa),
                temperatureMilliC: "25000"
            ),
        ])
        try JSONEncoder().encode(spec).write(to: URL(fileURLWithPath: path))
    }

    /// A vector as s16 counts at `scale` units per count, clamped to the register's range.
    private static func counts(_ v: Vector3, scale: Double) -> [Int64] {
        [v.x, v.y, v.z].map { Int64(min(max(($0 / scale).rounded(), -32768), 32767)) }
    }
}
