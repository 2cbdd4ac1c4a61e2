/// Fake devices modelled on real kernel drivers: their attribute names, scan types and scales (from the
/// drivers' tables, printed the way IIO prints them).
package enum FakeIIOModels {
    /// bmi160 (drivers/iio/imu/bmi160): one device, accel + gyro in one triggered buffer with its own
    /// data-ready trigger `bmi160-dev0`; rates and scales per type. Scales: ±2 g = 0.000598 m/s²/count,
    /// ±2000 °/s = 0.001065 rad/s/count. Scan: gyro x,y,z at 4–6, accel x,y,z at 7–9, timestamp at 10.
    /// The real driver exposes `in_mount_matrix`; this model uses the ABI's per-type `in_accel_mount_matrix`
    /// and `in_anglvel_mount_matrix` so that form is exercised too (the other models cover the others).
    package static func bmi160(
        id: String = "iio:device0",
        records: [[Int64]],
        accelMatrix: String = "1, 0, 0; 0, 1, 0; 0, 0, 1",
        gyroMatrix: String = "1, 0, 0; 0, 1, 0; 0, 0, 1",
        withTimestamp: Bool = true,
        rateHz: String = "100"
    ) -> FakeIIODevice {
        var scan: [FakeIIODevice.ScanElement] = [
            .init("in_anglvel_x", index: 4, type: "le:s16/16>>0"),
            .init("in_anglvel_y", index: 5, type: "le:s16/16>>0"),
            .init("in_anglvel_z", index: 6, type: "le:s16/16>>0"),
            .init("in_accel_x", index: 7, type: "le:s16/16>>0"),
            .init("in_accel_y", index: 8, type: "le:s16/16>>0"),
            .init("in_accel_z", index: 9, type: "le:s16/16>>0"),
        ]
        if withTimestamp { scan.append(.init("in_timestamp", index: 10, type: "le:s64/64>>0")) }
        return FakeIIODevice(
            id: id,
            name: "bmi160",
            attrs: [
                "in_accel_scale": "0.000598",
                "in_accel_scale_available": "0.000598 0.001197 0.002394 0.004788",
                "in_anglvel_scale": "0.001065",
                "in_anglvel_scale_available": "0.001065 0.000532 0.000266 0.000133 0.000066",
                "in_accel_sampling_frequency": rateHz,
                "in_accel_sampling_frequency_available": "0.78125 1.5625 3.125 6.25 12.5 25 50 100 200 400 800 1600",
                "in_anglvel_sampling_frequency": rateHz,
                "in_anglvel_sampling_frequency_available": "25 50 100 200 400 800 1600 3200",
                "in_accel_x_raw": "0", "in_accel_y_raw": "0", "in_accel_z_raw": "0",
                "in_anglvel_x_raw": "0", "in_anglvel_y_raw": "0", "in_anglvel_z_raw": "0",
                "in_accel_mount_matrix": accelMatrix,
                "in_anglvel_mount_matrix": gyroMatrix,
                "current_timestamp_clock": "monotonic",
            ],
            trigger: "bmi160-dev0",
            scan: scan,
            records: records
        )
    }

    /// inv_icm42600 (drivers/iio/imu/inv_icm42600): accel and gyro are two devices fed by one FIFO, no
    /// trigger. Scan: x,y,z big-endian s16 at 0–2, temperature (CPU-endian s16) at 3, timestamp at 4.
    /// Scales: ±16 g = 0.004788403 m/s²/count, ±2000 °/s = 0.001065264 rad/s/count; temperature
    /// (raw + 3311.986611) × 7.548309 m°C (T = raw/132.48 + 25 °C). `mount_matrix` is shared by all channels.
    package static func icm42600(
        kind: Kind,
        id: String,
        records: [[Int64]],
        matrix: String = "1, 0, 0; 0, 1, 0; 0, 0, 1",
        available: String = "12.500000 25.000000 50.000000 100.000000 200.000000 400.000000 800.000000 1600.000000",
        clock: String = "monotonic"
    ) -> FakeIIODevice {
        let type = kind == .accel ? "accel" : "anglvel"
        let scale = kind == .accel ? "0.004788403" : "0.001065264"
        return FakeIIODevice(
            id: id,
            name: kind == .accel ? "icm42605-accel" : "icm42605-gyro",
            attrs: [
                "in_\(type)_scale": scale,
                "in_\(type)_x_raw": "0", "in_\(type)_y_raw": "0", "in_\(type)_z_raw": "0",
                "in_\(type)_x_calibbias": "0", "in_\(type)_y_calibbias": "0", "in_\(type)_z_calibbias": "0",
                "in_temp_raw": "0", "in_temp_scale": "7.548309", "in_temp_offset": "3311.986611",
                "sampling_frequency": "50",
                "sampling_frequency_available": available,
                "mount_matrix": matrix,
                "current_timestamp_clock": clock,
            ],
            scan: [
                .init("in_\(type)_x", index: 0, type: "be:s16/16>>0"),
                .init("in_\(type)_y", index: 1, type: "be:s16/16>>0"),
                .init("in_\(type)_z", index: 2, type: "be:s16/16>>0"),
                .init("in_temp", index: 3, type: "le:s16/16>>0"),
                .init("in_timestamp", index: 4, type: "le:s64/64>>0"),
            ],
            bufferAttrs: ["watermark": "1", "hwfifo_enabled": "0"],
            records: records
        )
    }

    package enum Kind: Sendable { case accel, gyro }

    /// ak8975 (drivers/iio/magnetometer/ak8975): no buffer without an external trigger, so it is polled;
    /// per-axis scales from the fuse-ROM sensitivity adjustment, `(ASA + 128) × 3000 / 256` µG: ASA 0x9f,
    /// 0xa0, 0x94 give 0.003363, 0.003375, 0.003234 G/count. `in_mount_matrix` as the driver exposes it.
    package static func ak8975(
        id: String,
        raw: (Int, Int, Int),
        matrix: String = "0, -1, 0; -1, 0, 0; 0, 0, -1"
    ) -> FakeIIODevice {
        FakeIIODevice(
            id: id,
            name: "ak8975",
            attrs: [
                "in_magn_x_raw": "\(raw.0)", "in_magn_y_raw": "\(raw.1)", "in_magn_z_raw": "\(raw.2)",
                "in_magn_x_scale": "0.003363", "in_magn_y_scale": "0.003375", "in_magn_z_scale": "0.003234",
                "in_mount_matrix": matrix,
            ]
        )
    }

    /// bmp280 (drivers/iio/pressure/bmp280): processed values only, polled: `in_pressure_input` in kPa
    /// (compensated Pa/256 ÷ 1000, printed with 9 decimals), `in_temp_input` in m°C; oversampling but no
    /// sampling_frequency.
    package static func bmp280(id: String, pressureKPa: String, temperatureMilliC: String) -> FakeIIODevice {
        FakeIIODevice(
            id: id,
            name: "bmp280",
            attrs: [
                "in_pressure_input": pressureKPa,
                "in_temp_input": temperatureMilliC,
                "in_pressure_oversampling_ratio": "16",
                "in_pressure_oversampling_ratio_available": "1 2 4 8 16",
                "in_temp_oversampling_ratio": "2",
                "in_temp_oversampling_ratio_available": "1 2 4 8 16",
            ]
        )
    }

    /// bmc150-accel (drivers/iio/accel/bmc150-accel-core): 12-bit counts left-justified in 16 bits
    /// (`le:s12/16>>4`), triggered by its own `bmc150_accel-dev0` trigger; ±2 g = 0.009582 m/s²/count.
    package static func bmc150(id: String, records: [[Int64]]) -> FakeIIODevice {
        FakeIIODevice(
            id: id,
            name: "bmc150_accel",
            attrs: [
                "in_accel_scale": "0.009582",
                "in_accel_x_raw": "0", "in_accel_y_raw": "0", "in_accel_z_raw": "0",
                "sampling_frequency": "125",
                "sampling_frequency_available": "15.620000 31.260000 62.500000 125 250 500 1000 2000",
                "in_mount_matrix": "1, 0, 0; 0, 1, 0; 0, 0, 1",
            ],
            trigger: "bmc150_accel-dev0",
            scan: [
                .init("in_accel_x", index: 0, type: "le:s12/16>>4"),
                .init("in_accel_y", index: 1, type: "le:s12/16>>4"),
                .init("in_accel_z", index: 2, type: "le:s12/16>>4"),
                .init("in_timestamp", index: 3, type: "le:s64/64>>0"),
            ],
            records: records
        )
    }

    /// A magnetometer reporting unsigned counts around a mid-scale zero (`in_magn_offset` = −32768), big-endian,
    /// as memsic-style parts do: (raw − 32768) × 0.0009765625 G/count (1/1024 G).
    package static func unsignedMagnetometer(id: String, records: [[Int64]]) -> FakeIIODevice {
        FakeIIODevice(
            id: id,
            name: "mmc-style",
            attrs: [
                "in_magn_scale": "0.0009765625", "in_magn_offset": "-32768",
                "in_magn_x_raw": "32768", "in_magn_y_raw": "32768", "in_magn_z_raw": "32768",
                "sampling_frequency": "50", "sampling_frequency_available": "[10 10 100]",
            ],
            scan: [
                .init("in_magn_x", index: 0, type: "be:u16/16>>0"),
                .init("in_magn_y", index: 1, type: "be:u16/16>>0"),
                .init("in_magn_z", index: 2, type: "be:u16/16>>0"),
            ],
            records: records
        )
    }
}
