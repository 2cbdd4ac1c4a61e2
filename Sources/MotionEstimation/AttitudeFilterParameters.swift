/// The settings of `AttitudeFilter`. The defaults are VQF 2.1.2's (vqf.cpp `VQFParams::VQFParams`), which
/// the BROAD benchmark figures in BENCHMARKS.md were measured with; they are what the agent ships.
package struct AttitudeFilterParameters: Sendable, Hashable, Codable {
    /// Time constant of the accelerometer low-pass in the almost-inertial frame, s. Larger trusts the
    /// gyroscope longer during linear acceleration. Default 3.
    package var accelerometerTau: Double = 3.0
    /// Time constant of the heading correction by the magnetometer, s. Default 9.
    package var magnetometerTau: Double = 9.0
    /// Estimate the gyroscope bias while moving (from the inclination correction). Default true.
    package var motionBiasEstimation = true
    /// Estimate the gyroscope bias at rest (and detect rest). Default true.
    package var restBiasEstimation = true
    /// Detect magnetic disturbances (field norm or dip off the reference) and stop heading correction
    /// during them. Default true.
    package var magneticDisturbanceRejection = true

    /// Standard deviation of the initial bias estimate, °/s. Default 0.5.
    package var biasSigmaInitial: Double = 0.5
    /// Time in which the bias variance grows by (0.1 °/s)², s. Default 100.
    package var biasForgettingTime: Double = 100.0
    /// Largest bias estimate and largest per-step disagreement used, °/s. Default 2.
    package var biasClip: Double = 2.0
    /// Standard deviation of the in-motion bias measurement, °/s. Default 0.1.
    package var biasSigmaMotion: Double = 0.1
    /// How much less the vertical bias component is trusted in motion, ratio. Default 0.0001.
    package var biasVerticalForgettingFactor: Double = 0.0001
    /// Standard deviation of the at-rest bias measurement, °/s. Default 0.03.
    package var biasSigmaRest: Double = 0.03

    /// Time the device must be still before rest is declared, s. Default 1.5.
    package var restMinimumTime: Double = 1.5
    /// Time constant of the rest-detection low-pass, s. Default 0.5.
    package var restFilterTau: Double = 0.5
    /// Rest threshold on the gyroscope deviation from its low-pass, °/s. Default 2.
    package var restThresholdGyroscope: Double = 2.0
    /// Rest threshold on the specific-force deviation from its low-pass, m/s². Default 0.5.
    package var restThresholdAccelerometer: Double = 0.5

    /// Time constant of the low-pass on the current field norm and dip, s. Default 0.05 (≤ 0 disables it).
    package var magneticCurrentTau: Double = 0.05
    /// Time constant of the slow update of the reference norm and dip, s. Default 20.
    package var magneticReferenceTau: Double = 20.0
    /// Relative field-norm deviation that counts as a disturbance, ratio. Default 0.1.
    package var magneticNormThreshold: Double = 0.1
    /// Dip-angle deviation that counts as a disturbance, °. Default 10.
    package var magneticDipThreshold: Double = 10.0
    /// Time a new, steady field must be seen while turning before it becomes the reference, s. Default 20.
    package var magneticNewTime: Double = 20.0
    /// As `magneticNewTime` for the very first reference, s. Default 5.
    package var magneticNewFirstTime: Double = 5.0
    /// Turn rate that counts towards accepting a new field, °/s. Default 20.
    package var magneticNewMinimumGyroscope: Double = 20.0
    /// Time the field must be undisturbed before heading correction resumes, s. Default 0.5.
    package var magneticMinimumUndisturbedTime: Double = 0.5
    /// Longest time heading correction is stopped during a disturbance, s. Default 60.
    package var magneticMaximumRejectionTime: Double = 60.0
    /// Gain reduction after the longest rejection time, and how fast the rejection budget refills, ratio.
    /// Default 2.
    package var magneticRejectionFactor: Double = 2.0

    /// Longest interval between two gyroscope samples that is integrated, s. A longer gap is not
    /// integrated (the rotation during it is unknown): the filter keeps attitude, bias and magnetic
    /// reference, restarts its low-pass filters and rest detection, and lets the next accelerometer and
    /// magnetometer samples correct inclination at once and heading quickly. Default 0.5.
    package var maximumGap: Double = 0.5

    package init() {}

    /// VQF 2.1.2's defaults.
    package static let `default` = AttitudeFilterParameters()
}
