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
///     score = intercept + logPeak · ln(peak g) + logEnergy · ln(max(energy g·s, 0.001))
///             + logStillness · ln(max(stillness g, 0.005))
///             [+ with a gyroscope: gyroscopeIntercept + logRotationRate · ln(largest |ω| rad/s + 0.1)]
///
/// The coefficients are fitted, with the threshold folded into `intercept`, by
/// `scripts/research/falls/tune_falls.py` on SisFall (BENCHMARKS.md, "Falls"): one set for 50–200 Hz, with and
/// without the gyroscope. Every input is a magnitude, so no device orientation or axis convention enters.
package struct FallScore: Sendable, Equatable {
    package var intercept: Double
    package var logPeak: Double
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
        logPeak: Double,
        logEnergy: Double,
        logStillness: Double,
        gyroscopeIntercept: Double,
        logRotationRate: Double
    ) {
        self.intercept = intercept
        self.logPeak = logPeak
        self.logEnergy = logEnergy
        self.logStillness = logStillness
        self.gyroscopeIntercept = gyroscopeIntercept
        self.logRotationRate = logRotationRate
    }

    /// The score of one candidate; `peakRotationRateRadPerS` nil without a gyroscope.
    @inlinable
    package func value(
        peakG: Double,
        energyGSeconds: Double,
        stillnessG: Double,
        peakRotationRateRadPerS: Double?
    ) -> Double {
        var s = intercept + logPeak * log(peakG)
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
        intercept: 3.2278934258408194,
        logPeak: 1.855437398982469,
        logEnergy: 3.6029877227642175,
        logStillness: -0.09450625407629538,
        gyroscopeIntercept: -0.47713605197471076,
        logRotationRate: 0.44883132466728914
    )
}
