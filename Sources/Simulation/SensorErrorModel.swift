import MotionModel

/// How far the simulated sensors are from perfect. White-noise figures are densities, so the noise per
/// sample grows with the sampling rate (σ = density · √(rate / 2), the rate/2 being the bandwidth of the
/// sensor's anti-aliasing filter at that output data rate), as on real parts.
///
/// Defaults describe a consumer MEMS set: a Bosch BMI160 IMU with a BMM150 magnetometer and a BMP280
/// barometer (figures from their datasheets, cited per field). Constant biases are drawn once per seed
/// from zero-mean normals with the given standard deviations; the truth reports the values in effect.
package struct SensorErrorModel: Sendable, Equatable {
    /// Accelerometer white noise, g/√Hz. BMI160: 180 µg/√Hz (datasheet, "output noise density", normal
    /// mode).
    package var accelerometerNoiseDensity: Double = 180e-6
    /// Standard deviation of the constant accelerometer offset per axis, g. BMI160 zero-g offset is
    /// ±40 mg untrimmed; phones are factory trimmed to roughly a quarter of that.
    package var accelerometerBiasSigma: Double = 0.01
    /// Gyroscope white noise, rad/s/√Hz. BMI160: 0.007 °/s/√Hz (datasheet, "output noise density").
    package var gyroscopeNoiseDensity: Double = 0.007 * .pi / 180
    /// Standard deviation of the constant gyroscope offset per axis, rad/s. BMI160 zero-rate offset is
    /// ±3 °/s untrimmed; 0.5 °/s is a typical residual after factory trimming.
    package var gyroscopeBiasSigma: Double = 0.5 * .pi / 180
    /// Gyroscope rate random walk, rad/s/√s: the bias wanders by this times √(elapsed seconds). 0.001 °/s/√s
    /// gives ≈ 0.06 °/s per hour, the in-run stability of consumer MEMS gyroscopes (≈ 5–10 °/h).
    package var gyroscopeBiasRandomWalk: Double = 0.001 * .pi / 180
    /// Magnetometer white noise per axis and sample, µT (independent of rate: each reading is a separate
    /// conversion). BMM150: ≈ 0.3 µT resolution, noise of the same order in the regular preset.
    package var magnetometerNoise: Double = 0.4
    /// Standard deviation of the hard-iron offset per axis (the phone's own magnetised parts), µT.
    package var hardIronSigma: Double = 10
    /// Hard-iron offset that overrides the seeded draw, µT, device axes.
    package var hardIron: Vector3? = nil
    /// Soft-iron matrix rows (device axes), applied to the Earth field before the hard-iron offset;
    /// `nil` is the identity.
    package var softIron: (Vector3, Vector3, Vector3)? = nil
    /// Barometer white noise per sample, kPa. BMP280: 2.4 cm RMS ≈ 0.3 Pa in the "handheld device dynamic"
    /// setting (datasheet table 7).
    package var barometerNoise: Double = 0.3e-3
    /// Barometer offset, kPa, standard deviation of the seeded constant. BMP280 relative accuracy ±0.12 hPa.
    package var barometerOffsetSigma: Double = 0.012
    /// Standard deviation of the seeded rate at which ambient pressure drifts (weather), kPa/s.
    /// 5 × 10⁻⁶ kPa/s is 0.18 hPa/h, an ordinary weather change.
    package var barometerDriftRateSigma: Double = 5e-6
    /// How fast that drift rate itself wanders, kPa/s/√s.
    package var barometerDriftRateRandomWalk: Double = 1e-7
    /// Die temperature at start, °C, and its white noise per sample, °C.
    package var temperatureC: Double = 25
    package var temperatureNoise: Double = 0.01

    package init() {}

    /// The consumer MEMS defaults described above.
    package static let consumerMEMS = SensorErrorModel()

    /// Perfect sensors: no noise, no bias, no drift (the readings are the truth).
    package static let ideal: SensorErrorModel = {
        var m = SensorErrorModel()
        m.accelerometerNoiseDensity = 0
        m.accelerometerBiasSigma = 0
        m.gyroscopeNoiseDensity = 0
        m.gyroscopeBiasSigma = 0
        m.gyroscopeBiasRandomWalk = 0
        m.magnetometerNoise = 0
        m.hardIronSigma = 0
        m.barometerNoise = 0
        m.barometerOffsetSigma = 0
        m.barometerDriftRateSigma = 0
        m.barometerDriftRateRandomWalk = 0
        m.temperatureNoise = 0
        return m
    }()

    package static func == (a: SensorErrorModel, b: SensorErrorModel) -> Bool {
        a.accelerometerNoiseDensity == b.accelerometerNoiseDensity
            && a.accelerometerBiasSigma == b.accelerometerBiasSigma
            && a.gyroscopeNoiseDensity == b.gyroscopeNoiseDensity
            && a.gyroscopeBiasSigma == b.gyroscopeBiasSigma
            && a.gyroscopeBiasRandomWalk == b.gyroscopeBiasRandomWalk
            && a.magnetometerNoise == b.magnetometerNoise
            && a.hardIronSigma == b.hardIronSigma
            && a.hardIron == b.hardIron
            && a.softIron?.0 == b.softIron?.0 && a.softIron?.1 == b.softIron?.1 && a.softIron?.2 == b.softIron?.2
            && a.barometerNoise == b.barometerNoise
            && a.barometerOffsetSigma == b.barometerOffsetSigma
            && a.barometerDriftRateSigma == b.barometerDriftRateSigma
            && a.barometerDriftRateRandomWalk == b.barometerDriftRateRandomWalk
            && a.temperatureC == b.temperatureC
            && a.temperatureNoise == b.temperatureNoise
    }
}
