import MotionModel

/// Core Motion's altimeter: relative altitude since start (`CMAltitudeData`) and absolute altitude
/// (`CMAbsoluteAltitudeData`) from barometric pressure, one sample per `update`.
///
/// Pressure is smoothed with a first-order low-pass (`pressureTimeConstant`); heights come from the ICAO
/// standard atmosphere. Relative altitude needs no calibration (weather changes the pressure by about
/// 0.1 kPa an hour, ≈ 8 m, so it drifts over hours as Core Motion's does). Absolute altitude needs the
/// day's sea-level pressure (QNH, from a weather service or a known height); its `accuracy` combines that
/// pressure's uncertainty with the noise, its `precision` is the smoothed output's noise.
package struct Altimeter: Sendable {
    package struct Settings: Sendable, Equatable {
        /// Time constant of the pressure smoothing, s.
        package var pressureTimeConstant: Double
        /// Sea-level pressure (QNH) the absolute altitude refers to, kPa.
        package var seaLevelPressureKPa: Double
        /// One standard deviation of how far the true sea-level pressure may be from the configured one, kPa.
        /// 1 kPa is the day-to-day spread of mid-latitude weather when nobody sets QNH (≈ 84 m of height).
        package var seaLevelPressureUncertaintyKPa: Double
        /// Time constant of the noise estimate behind `precision`, s.
        package var noiseTimeConstant: Double

        package init(
            pressureTimeConstant: Double,
            seaLevelPressureKPa: Double,
            seaLevelPressureUncertaintyKPa: Double,
            noiseTimeConstant: Double
        ) {
            self.pressureTimeConstant = pressureTimeConstant
            self.seaLevelPressureKPa = seaLevelPressureKPa
            self.seaLevelPressureUncertaintyKPa = seaLevelPressureUncertaintyKPa
            self.noiseTimeConstant = noiseTimeConstant
        }

        package static let defaults = Settings(
            pressureTimeConstant: 0.5,
            seaLevelPressureKPa: StandardAtmosphere.seaLevelPressureKPa,
            seaLevelPressureUncertaintyKPa: 1.0,
            noiseTimeConstant: 10
        )
    }

    package let settings: Settings
    /// The smoothed pressure of the first sample, kPa: relative altitude is measured from it.
    package private(set) var referenceKPa: Double?
    /// The smoothed pressure, kPa.
    package private(set) var pressureKPa = 0.0
    private var lastTimestamp = 0.0
    private var residualVariance = 0.0
    private var smoothingGain = 1.0

    package init(settings: Settings = .defaults) {
        self.settings = settings
    }

    /// Feeds one sample; returns the relative altitude when it carried a pressure.
    @discardableResult
    package mutating func update(_ sample: IMUSample) -> AltitudeData? {
        guard let p = sample.pressureKPa, p.isFinite, p > 0 else { return nil }
        if referenceKPa == nil {
            referenceKPa = p
            pressureKPa = p
            lastTimestamp = sample.timestamp
        } else {
            let dt = max(sample.timestamp - lastTimestamp, 0)
            lastTimestamp = sample.timestamp
            let alpha = dt / (settings.pressureTimeConstant + dt)
            let residual = p - pressureKPa
            pressureKPa += alpha * residual
            let beta = dt / (settings.noiseTimeConstant + dt)
            residualVariance += beta * (residual * residual - residualVariance)
            smoothingGain = alpha
        }
        return altitudeData(at: sample.timestamp)
    }

    /// Metres since the first pressure sample; nil before it.
    package var relativeAltitude: Double? {
        guard let reference = referenceKPa else { return nil }
        return StandardAtmosphere.altitude(pressureKPa: pressureKPa, referenceKPa: reference)
    }

    private func altitudeData(at timestamp: Double) -> AltitudeData? {
        relativeAltitude.map { AltitudeData(timestamp: timestamp, relativeAltitude: $0, pressureKPa: pressureKPa) }
    }

    /// Altitude above sea level with its accuracy and precision; nil before the first pressure sample.
    package var absoluteAltitude: AbsoluteAltitudeData? {
        guard referenceKPa != nil else { return nil }
        let qnh = settings.seaLevelPressureKPa
        let altitude = StandardAtmosphere.altitude(pressureKPa: pressureKPa, referenceKPa: qnh)
        let metresPerKPa = StandardAtmosphere.metresPerKPa(at: pressureKPa, referenceKPa: qnh)
        // A first-order low-pass with gain α passes α/(2−α) of white noise's variance.
        let a = min(max(smoothingGain, 0), 1)
        let precision = (residualVariance * a / max(2 - a, 1)).squareRoot() * metresPerKPa
        // Height error from a wrong QNH: ∂h/∂p0 = (T0/L)·x·(p/p0)^x / p0 = (∂h/∂p)·p/p0.
        let qnhError = metresPerKPa * pressureKPa / qnh * settings.seaLevelPressureUncertaintyKPa
        let accuracy = (qnhError * qnhError + precision * precision).squareRoot()
        return AbsoluteAltitudeData(
            timestamp: lastTimestamp,
            altitude: altitude,
            accuracy: accuracy,
            precision: precision
        )
    }
}
