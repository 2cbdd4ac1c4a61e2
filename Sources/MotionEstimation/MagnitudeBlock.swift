import MotionModel

/// What the fall detector keeps of 0.1 s of samples (`FallDetector.blockSeconds`): enough to compute the features
/// of any impact in the 4 s around it from a fixed ring of these, whatever the sample rate.
struct MagnitudeBlock: Sendable {
    var count = 0
    /// Σ a, g: the mean direction of gravity over a window is the sum over its blocks.
    var sumAcceleration = Vector3.zero
    /// Σ |a| and Σ |a|², g and g²: the standard deviation of |a| over a window.
    var sumMagnitude = 0.0
    var sumSquares = 0.0
    /// Σ ||a| − 1 g|, g: the impact energy.
    var sumDeviation = 0.0
    /// The largest |a|, g, and the time of its first sample, s.
    var maxMagnitude = -Double.infinity
    var maxTime = 0.0
    /// The largest smoothed |a| (|a| through the fall detector's low-pass), g.
    var maxSmoothedMagnitude = -Double.infinity
    /// Samples that carried a rotation rate, the largest |ω| and Σ |ω|, rad/s.
    var rotationCount = 0
    var maxRotationRate = 0.0
    var sumRotationRate = 0.0
    /// Σ ||a| − baseline|, g: the activity that resolves a fall as rejected.
    var sumActivity = 0.0

    static let empty = MagnitudeBlock()

    @inline(__always)
    mutating func add(
        timestamp: Double,
        acceleration a: Vector3,
        magnitude m: Double,
        smoothedMagnitude s: Double,
        activity: Double,
        rotationRate: Double?
    ) {
        count += 1
        sumAcceleration += a
        sumMagnitude += m
        sumSquares += m * m
        sumDeviation += abs(m - 1)
        sumActivity += activity
        if m > maxMagnitude {
            maxMagnitude = m
            maxTime = timestamp
        }
        if s > maxSmoothedMagnitude { maxSmoothedMagnitude = s }
        if let w = rotationRate {
            rotationCount += 1
            sumRotationRate += w
            if w > maxRotationRate { maxRotationRate = w }
        }
    }
}
