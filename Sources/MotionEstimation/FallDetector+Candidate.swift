import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension FallDetector {
    /// What the detector measured around one candidate impact (exposed for tests and the research's cross-check).
    package struct Features: Sendable, Equatable {
        /// The impact's largest |a|, g, and its time, s.
        package var peakG: Double
        package var peakTime: Double
        /// The largest smoothed |a| (`Settings.peakTimeConstantSeconds`) over the second around the impact, g:
        /// the score's peak.
        package var smoothedPeakG: Double
        /// The change of the direction of gravity in the device across the impact, degrees.
        package var orientationChangeDegrees: Double
        /// Standard deviation of |a| from 1 to 2 s after the impact, g.
        package var stillnessG: Double
        /// Σ ||a| − 1 g| dt over the second around the impact, g·s.
        package var energyGSeconds: Double
        /// The largest |ω| from 1 s before to 1 s after, rad/s; nil without a gyroscope.
        package var peakRotationRateRadPerS: Double?
    }

    /// The features of block `k` when it holds a candidate impact (a local maximum of |a| ≥ `candidatePeakG`) whose
    /// windows have samples; nil otherwise. Reads only blocks `k − 20 … k + 19`, all in the ring once `k + 19`
    /// is complete.
    func features(ofCandidate k: Int) -> Features? {
        let b = block(k)
        guard b.count > 0, b.maxMagnitude >= settings.candidatePeakG else { return nil }
        for j in max(0, k - Self.localMaximumBlocks)..<k where block(j).maxMagnitude >= b.maxMagnitude { return nil }
        for j in (k + 1)...(k + Self.localMaximumBlocks) where block(j).maxMagnitude > b.maxMagnitude { return nil }
        var preSum = Vector3.zero
        var preCount = 0
        for j in max(0, k + Self.before.lowerBound)..<max(0, k + Self.before.upperBound) {
            let x = block(j)
            preSum += x.sumAcceleration
            preCount += x.count
        }
        var postSum = Vector3.zero
        var postCount = 0
        var postMagnitude = 0.0
        var postSquares = 0.0
        for j in (k + Self.after.lowerBound)..<(k + Self.after.upperBound) {
            let x = block(j)
            postSum += x.sumAcceleration
            postCount += x.count
            postMagnitude += x.sumMagnitude
            postSquares += x.sumSquares
        }
        guard preCount > 0, postCount > 0 else { return nil }
        let before = preSum / Double(preCount)
        let after = postSum / Double(postCount)
        let mean = postMagnitude / Double(postCount)
        let stillness = max(postSquares / Double(postCount) - mean * mean, 0).squareRoot()
        var energy = 0.0
        var smoothedPeak = -Double.infinity
        for j in max(0, k + Self.energy.lowerBound)..<(k + Self.energy.upperBound) {
            let x = block(j)
            if x.count > 0 { energy += x.sumDeviation / Double(x.count) }
            smoothedPeak = max(smoothedPeak, x.maxSmoothedMagnitude)
        }
        var rotation: Double?
        for j in max(0, k + Self.rotation.lowerBound)..<(k + Self.rotation.upperBound) {
            let x = block(j)
            if x.rotationCount > 0 { rotation = max(rotation ?? 0, x.maxRotationRate) }
        }
        return Features(
            peakG: b.maxMagnitude,
            peakTime: b.maxTime,
            smoothedPeakG: smoothedPeak,
            orientationChangeDegrees: Self.angle(before, after) * 180 / Double.pi,
            stillnessG: stillness,
            energyGSeconds: energy * Self.blockSeconds,
            peakRotationRateRadPerS: rotation
        )
    }

    /// Whether a candidate with these features is a fall, as the detector decides when its last window closes at
    /// `t`.
    func judge(_ f: Features, at t: Double) -> FallDetectionEvent? {
        guard f.orientationChangeDegrees >= settings.minimumOrientationChangeDegrees,
            f.stillnessG <= settings.maximumStillnessG,
            score(f) >= 0
        else { return nil }
        return FallDetectionEvent(
            date: f.peakTime,
            peakAcceleration: f.peakG,
            orientationChange: f.orientationChangeDegrees * Double.pi / 180,
            detectionDate: t
        )
    }

    /// The candidate's score (`FallScore`): a fall when ≥ 0 and through the gates.
    package func score(_ f: Features) -> Double {
        settings.score.value(
            smoothedPeakG: f.smoothedPeakG,
            energyGSeconds: f.energyGSeconds,
            stillnessG: f.stillnessG,
            peakRotationRateRadPerS: f.peakRotationRateRadPerS
        )
    }

    /// The angle between two vectors, rad (0 when either is zero).
    static func angle(_ u: Vector3, _ v: Vector3) -> Double {
        let n = u.norm * v.norm
        guard n > 0 else { return 0 }
        return acos(min(max(u.dot(v) / n, -1), 1))
    }
}
