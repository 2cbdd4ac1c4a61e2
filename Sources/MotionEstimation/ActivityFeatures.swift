/// What the activity classifier reads from one 5 s window of the 25 Hz series (`ActivityWindow`).
///
/// Every feature is orientation-free: a magnitude, or a part taken relative to gravity's direction in the
/// window (the mean acceleration) or to the motion's own main axis — so the device may sit any way in a pocket,
/// on a wrist or a strap, and a rotated window gives the same features. No random-rotation augmentation is
/// needed for that. The first eight are TMD's statistics (the vehicle model reads those only).
package struct ActivityFeatures: Sendable, Equatable {
    /// |a|, m/s² (specific-force magnitude: ≈ 9.81 at rest).
    package var accelerationMean = 0.0
    package var accelerationMin = 0.0
    package var accelerationMax = 0.0
    package var accelerationStd = 0.0
    /// |ω|, rad/s.
    package var rotationMean = 0.0
    package var rotationMin = 0.0
    package var rotationMax = 0.0
    package var rotationStd = 0.0
    /// 10th and 90th percentile of |a|, m/s².
    package var accelerationP10 = 0.0
    package var accelerationP90 = 0.0
    /// Standard deviation of the acceleration along gravity, and the rms of its horizontal part, m/s².
    package var verticalStd = 0.0
    package var horizontalStd = 0.0
    /// The vertical variance's share of the total (0…1).
    package var verticalFraction = 0.0
    /// Rms rotation rate about gravity's direction and about horizontal axes, rad/s.
    package var verticalRotation = 0.0
    package var horizontalRotation = 0.0
    /// Mean and largest angle between gravity's direction and the acceleration averaged over 0.2 s, °.
    package var tiltMean = 0.0
    package var tiltMax = 0.0
    /// Best normalised autocorrelation over lags of 0.32–2 s, and its lag (s), of |a|, of |ω| and of the
    /// horizontal rotation rate.
    package var accelerationPeriodicity = 0.0
    package var accelerationPeriod = 0.0
    package var rotationPeriodicity = 0.0
    package var rotationPeriod = 0.0
    package var horizontalRotationPeriodicity = 0.0
    package var horizontalRotationPeriod = 0.0
    /// Mean |Δa| per second on the 25 Hz grid, m/s³.
    package var jerk = 0.0
    /// Share of the rotation rate's second moment about its main axis (1: about one axis, like a thigh
    /// turning at the hip; 1/3: about all alike), and of the acceleration's variance along its main axis.
    package var rotationAxisShare = 0.0
    package var accelerationAxisShare = 0.0

    package init() {}

    /// TMD's eight statistics of the window (what the vehicle model reads).
    package var statistics: ActivityModel.WindowStatistics {
        ActivityModel.WindowStatistics(
            accelerationMean: accelerationMean,
            accelerationMin: accelerationMin,
            accelerationMax: accelerationMax,
            accelerationStd: accelerationStd,
            rotationMean: rotationMean,
            rotationMin: rotationMin,
            rotationMax: rotationMax,
            rotationStd: rotationStd
        )
    }

    /// Names in `subscript` order (the training script's columns).
    package static let names = [
        "accelerationMean", "accelerationMin", "accelerationMax", "accelerationStd",
        "rotationMean", "rotationMin", "rotationMax", "rotationStd",
        "accelerationP10", "accelerationP90", "verticalStd", "horizontalStd", "verticalFraction",
        "verticalRotation", "horizontalRotation", "tiltMean", "tiltMax",
        "accelerationPeriodicity", "accelerationPeriod", "rotationPeriodicity", "rotationPeriod",
        "horizontalRotationPeriodicity", "horizontalRotationPeriod", "jerk",
        "rotationAxisShare", "accelerationAxisShare",
    ]

    /// Feature `i` in `names` order.
    @inlinable
    package subscript(i: Int) -> Double {
        switch i {
        case 0: accelerationMean
        case 1: accelerationMin
        case 2: accelerationMax
        case 3: accelerationStd
        case 4: rotationMean
        case 5: rotationMin
        case 6: rotationMax
        case 7: rotationStd
        case 8: accelerationP10
        case 9: accelerationP90
        case 10: verticalStd
        case 11: horizontalStd
        case 12: verticalFraction
        case 13: verticalRotation
        case 14: horizontalRotation
        case 15: tiltMean
        case 16: tiltMax
        case 17: accelerationPeriodicity
        case 18: accelerationPeriod
        case 19: rotationPeriodicity
        case 20: rotationPeriod
        case 21: horizontalRotationPeriodicity
        case 22: horizontalRotationPeriod
        case 23: jerk
        case 24: rotationAxisShare
        default: accelerationAxisShare
        }
    }
}
