import MotionModel

/// Applies the heading-usability policy to north-referenced device motion: a compass needs a horizontal field, so
/// below 6000 nT the heading is downgraded (accuracy at most low) and below 2000 nT (near the magnetic poles, or
/// inside steel) it is refused (−1). WMM2025's report gives the thresholds ("blackout" and "caution" zones,
/// ``WorldMagneticModel/HeadingUsability``).
///
/// Where the location is configured, the World Magnetic Model's expectation decides; otherwise the horizontal
/// field the device measures, smoothed over about two seconds.
package struct HeadingLimiter: Sendable {
    /// From the World Magnetic Model at the configured location; nil: judged from the measured field.
    package var expected: WorldMagneticModel.HeadingUsability?
    /// The horizontal component of the calibrated field, nT, smoothed over about two seconds.
    package private(set) var measuredHorizontalNanotesla = Double.nan

    package init(expected: WorldMagneticModel.HeadingUsability? = nil) {
        self.expected = expected
    }

    /// How far the heading can be trusted now.
    package var usability: WorldMagneticModel.HeadingUsability {
        expected
            ?? (measuredHorizontalNanotesla.isNaN
                ? .normal : WorldMagneticModel.HeadingUsability(horizontalNanotesla: measuredHorizontalNanotesla))
    }

    /// Follows the horizontal field of every estimated sample (`rateHz`: how often they come).
    package mutating func observe(_ motion: DeviceMotion, rateHz: Double) {
        let m = motion.magneticField
        let g = motion.gravity.normalized
        let horizontal = (m - g * m.dot(g)).norm * 1000
        guard horizontal.isFinite, motion.magneticFieldAccuracy != .uncalibrated else { return }
        let alpha = min(1, 1 / (2 * max(rateHz, 1)))
        measuredHorizontalNanotesla =
            measuredHorizontalNanotesla.isNaN
            ? horizontal : measuredHorizontalNanotesla + alpha * (horizontal - measuredHorizontalNanotesla)
    }

    /// Downgrades or refuses `motion`'s heading as the usability demands.
    package func limit(_ motion: inout DeviceMotion) {
        switch usability {
        case .normal: break
        case .degraded: motion.magneticFieldAccuracy = min(motion.magneticFieldAccuracy, .low)
        case .unusable:
            motion.heading = -1
            motion.magneticFieldAccuracy = .uncalibrated
        }
    }
}
