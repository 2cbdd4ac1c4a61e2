#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The fall detector's decision on a candidate impact that passed its gates: a logistic score on magnitude
/// features, a fall when it is at least 0.
///
///     score = intercept + logSmoothedPeak · ln(smoothed peak g) + logEnergy · ln(max(energy g·s, 0.001))
///             + logStillness · ln(max(stillness g, 0.005))
///             [+ with a gyroscope: gyroscopeIntercept + logRotationRate · ln(largest |ω| rad/s + 0.1)]
///
/// The coefficients are fitted, with the threshold folded into `intercept`, by
/// `scripts/research/falls/tune_falls.py` on SisFall (BENCHMARKS.md, "Falls"): one set for 50–200 Hz, with and
/// without the gyroscope. Every input is a magnitude, so no device orientation or axis convention enters. The
/// smoothed peak is the largest |a| through a first-order low-pass (`FallDetector.Settings.peakTimeConstantSeconds`)
/// over the second around the impact: it does not grow with the sample rate as the raw peak does.
package struct FallScore: Sendable, Equatable {
    package var intercept: Double
    package var logSmoothedPeak: Double
    package var logEnergy: Double
    package var logStillness: Double
    /// Added when the samples around the impact carried a rotation rate.
    package var gyroscopeIntercept: Double
    package var logRotationRate: Double

    /// Floors that keep the logarithms finite; the research script uses the same.
    package static let energyFloorGSeconds = 0.001
    package static let stillnessFloorG = 0.005
    package static let rotationRateOffsetRadPerS = 0.1

    package init(
        intercept: Double,
        logSmoothedPeak: Double,
        logEnergy: Double,
        logStillness: Double,
        gyroscopeIntercept: Double,
        logRotationRate: Double
    ) {
        self.intercept = intercept
        self.logSmoothedPeak = logSmoothedPeak
        self.logEnergy = logEnergy
        self.logStillness = logStillness
        self.gyroscopeIntercept = gyroscopeIntercept
        self.logRotationRate = logRotationRate
    }

    /// The score of one candidate; `peakRotationRateRadPerS` nil without a gyroscope.
    @inlinable
    package func value(
        smoothedPeakG: Double,
        energyGSeconds: Double,
        stillnessG: Double,
        peakRotationRateRadPerS: Double?
    ) -> Double {
        var s = intercept + logSmoothedPeak * log(smoothedPeakG)
        s += logEnergy * log(max(energyGSeconds, Self.energyFloorGSeconds))
        s += logStillness * log(max(stillnessG, Self.stillnessFloorG))
        if let w = peakRotationRateRadPerS {
            s += gyroscopeIntercept + logRotationRate * log(w + Self.rotationRateOffsetRadPerS)
        }
        return s
    }

    /// The shipped coefficients: `scripts/research/falls/run.sh --swift`, the procedure run on all 14 SisFall
    /// subjects (held-out figures of the same procedure in BENCHMARKS.md).
    package static let shipped = FallScore(
        intercept: 3.027212793250671,
        logSmoothedPeak: 5.89987086561623,
        logEnergy: 3.2089871840586284,
        logStillness: -0.03516259401470304,
        gyroscopeIntercept: -0.42446317175698844,
        logRotationRate: 0.4150727556226609
    )
}
