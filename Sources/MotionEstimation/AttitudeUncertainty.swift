import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A 1-σ estimate of the attitude's inclination and heading errors, propagated from the filter's state.
///
/// The filter (a VQF port) corrects inclination toward the low-passed accelerometer with time constant
/// `accelerometerTau` and heading toward the magnetometer with `magnetometerTau`; between corrections the
/// attitude drifts with the gyroscope bias it has not yet learnt. So each angle's variance, in rad²:
/// - grows by drift: σ += (σ_bias + `scaleError` · |ω|) · dt, with σ_bias the filter's own bias uncertainty
///   (`AttitudeFilter.gyroscopeBiasSigma`) and a gyroscope scale error for fast rotations;
/// - relaxes toward what its reference can tell, at the filter's own rate dt / τ:
///   inclination toward `accelerometerFloor`² + atan(|ā|)², ā the user acceleration low-passed over τ_acc —
///   sustained acceleration tilts the reference the filter follows (a car accelerating, a turn);
///   heading toward the magnetometer's error for its calibration (`magneticSigma`), plus the disagreement
///   the filter measured between the magnetic heading and its own — only while the magnetometer is used
///   (calibrated, not rejected as disturbed). While it is rejected or uncalibrated heading only grows,
///   up to 180°.
/// Allocation-free; a few multiplications per sample.
public struct AttitudeUncertainty: Sendable {
    /// Inclination error of a still accelerometer reference, rad (sensor noise and misalignment).
    public static let accelerometerFloor = 0.3 * Double.pi / 180
    /// Relative gyroscope scale error (MEMS, after factory trim).
    public static let scaleError = 0.005
    /// Heading error of a magnetic reference by calibration accuracy, rad.
    public static func magneticSigma(_ accuracy: MagneticFieldAccuracy) -> Double {
        switch accuracy {
        case .high: 1 * Double.pi / 180
        case .medium: 2 * Double.pi / 180
        case .low: 4 * Double.pi / 180
        case .uncalibrated: 8 * Double.pi / 180
        }
    }

    /// Variance of the reference part, rad².
    private var inclinationReference: Double
    private var headingReference: Double
    /// σ of the drift part, rad.
    private var inclinationDrift = 0.0
    private var headingDrift = 0.0
    private var userAcceleration = Vector3.zero

    /// Starts uncertain: 10° of inclination until the accelerometer has been followed, 180° of heading.
    public init() {
        inclinationReference = square(10 * Double.pi / 180)
        headingReference = square(Double.pi)
    }

    /// Inclination variance, rad².
    public var inclinationVariance: Double { inclinationReference + square(inclinationDrift) }
    /// Heading variance, rad² (at most π²).
    public var headingVariance: Double { min(headingReference + square(headingDrift), square(Double.pi)) }
    /// 1-σ inclination error, degrees.
    public var inclinationDegrees: Double { inclinationVariance.squareRoot() * 180 / .pi }
    /// 1-σ heading error, degrees.
    public var headingDegrees: Double { headingVariance.squareRoot() * 180 / .pi }

    /// Advances by `dt` s.
    /// - Parameters:
    ///   - rotationRate: bias-corrected gyroscope, rad/s.
    ///   - userAcceleration: g, device axes (nil when no accelerometer sample was used).
    ///   - biasSigma: the filter's gyroscope bias uncertainty, rad/s.
    ///   - magneticReference: the magnetic heading's error, rad (calibration floor and the filter's
    ///     disagreement), when a magnetic sample steered the heading in this update; nil when it was rejected
    ///     or absent.
    ///   - magneticGainScale: the share of the full magnetic gain the filter applied (`AttitudeFilter`).
    public mutating func update(
        dt: Double,
        rotationRate: Vector3,
        userAcceleration user: Vector3?,
        biasSigma: Double,
        parameters: AttitudeFilterParameters,
        magneticReference: Double?,
        magneticGainScale: Double = 1
    ) {
        guard dt > 0, dt.isFinite else { return }
        let rate = biasSigma + Self.scaleError * rotationRate.norm
        inclinationDrift += rate * dt
        headingDrift = min(headingDrift + rate * dt, Double.pi)
        if let u = user, u.isFinite {
            let tau = parameters.accelerometerTau
            let k = dt / (tau + dt)
            userAcceleration += k * (u - userAcceleration)
            inclinationDrift -= k * inclinationDrift
            let target = square(Self.accelerometerFloor) + square(atan(userAcceleration.norm))
            inclinationReference += k * (target - inclinationReference)
        }
        if let m = magneticReference {
            let k = magneticGainScale * dt / (parameters.magnetometerTau + dt)
            headingDrift -= k * headingDrift
            headingReference += k * (square(m) - headingReference)
        }
    }
}
