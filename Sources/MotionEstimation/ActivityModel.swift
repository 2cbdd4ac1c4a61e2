#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The activity classifier: gradient-boosted trees over one window's magnitude statistics, trained by
/// `scripts/research/activity/train_activity.py` (its constants are in `ActivityModel+Trees.swift`).
///
/// The inputs are exactly the TMD data set's eight statistics — mean, min, max and standard deviation of the
/// accelerometer magnitude (m/s²) and of the gyroscope magnitude (rad/s) over 5 s — so that set trains and
/// checks it; the model adds four derived inputs (both ranges and both coefficients of variation).
public enum ActivityModel {
    /// The classes, in the order of `probabilities`' output.
    public enum ActivityClass: Int, Sendable, CaseIterable {
        case stationary = 0
        case walking
        case running
        case cycling
        case automotive
    }

    /// One window's statistics in TMD's units.
    public struct WindowStatistics: Sendable, Equatable {
        /// Accelerometer magnitude, m/s² (specific-force magnitude: ≈ 9.81 at rest, whatever the sign).
        public var accelerationMean: Double
        public var accelerationMin: Double
        public var accelerationMax: Double
        public var accelerationStd: Double
        /// Gyroscope magnitude, rad/s.
        public var rotationMean: Double
        public var rotationMin: Double
        public var rotationMax: Double
        public var rotationStd: Double

        public init(
            accelerationMean: Double,
            accelerationMin: Double,
            accelerationMax: Double,
            accelerationStd: Double,
            rotationMean: Double,
            rotationMin: Double,
            rotationMax: Double,
            rotationStd: Double
        ) {
            self.accelerationMean = accelerationMean
            self.accelerationMin = accelerationMin
            self.accelerationMax = accelerationMax
            self.accelerationStd = accelerationStd
            self.rotationMean = rotationMean
            self.rotationMin = rotationMin
            self.rotationMax = rotationMax
            self.rotationStd = rotationStd
        }
    }

    /// Class probabilities (softmax of the trees' scores), in `ActivityClass` order.
    public typealias Probabilities = (Double, Double, Double, Double, Double)

    /// The model's twelve inputs; `features()` in the training script computes the same.
    @inlinable
    static func feature(_ i: Int, of w: WindowStatistics) -> Double {
        switch i {
        case 0: w.accelerationMean
        case 1: w.accelerationMin
        case 2: w.accelerationMax
        case 3: w.accelerationStd
        case 4: w.rotationMean
        case 5: w.rotationMin
        case 6: w.rotationMax
        case 7: w.rotationStd
        case 8: w.accelerationMax - w.accelerationMin
        case 9: w.rotationMax - w.rotationMin
        case 10: w.accelerationStd / max(w.accelerationMean, 1e-6)
        default: w.rotationStd / max(w.rotationMean, 1e-6)
        }
    }

    /// Class probabilities for one window. Allocation-free: walks the constant tree arrays.
    public static func probabilities(_ w: WindowStatistics) -> Probabilities {
        var s = (baseline[0], baseline[1], baseline[2], baseline[3], baseline[4])
        for tree in 0..<roots.count {
            var node = Int(roots[tree])
            while nodeFeature[node] >= 0 {
                let x = feature(Int(nodeFeature[node]), of: w)
                node = Int(x <= nodeThreshold[node] ? nodeLeft[node] : nodeRight[node])
            }
            let v = nodeValue[node]
            switch tree % classCount {
            case 0: s.0 += v
            case 1: s.1 += v
            case 2: s.2 += v
            case 3: s.3 += v
            default: s.4 += v
            }
        }
        let m = max(s.0, s.1, s.2, s.3, s.4)
        let e = (exp(s.0 - m), exp(s.1 - m), exp(s.2 - m), exp(s.3 - m), exp(s.4 - m))
        let total = e.0 + e.1 + e.2 + e.3 + e.4
        return (e.0 / total, e.1 / total, e.2 / total, e.3 / total, e.4 / total)
    }

    /// The most probable class and its probability.
    public static func classify(_ w: WindowStatistics) -> (ActivityClass, Double) {
        let p = probabilities(w)
        return best(p)
    }

    static func best(_ p: Probabilities) -> (ActivityClass, Double) {
        var c = ActivityClass.stationary
        var v = p.0
        if p.1 > v { (c, v) = (.walking, p.1) }
        if p.2 > v { (c, v) = (.running, p.2) }
        if p.3 > v { (c, v) = (.cycling, p.3) }
        if p.4 > v { (c, v) = (.automotive, p.4) }
        return (c, v)
    }
}
