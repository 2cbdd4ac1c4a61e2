import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A 1-σ estimate of the attitude's inclination and heading errors, propagated from the filter's state.
///
/// The filter (a VQF port) pulls inclination toward the low-passed accelerometer with time constant
/// `accelerometerTau` and heading toward the magnetometer with the gain it reports (`AttitudeFilter.magneticGain`);
/// between corrections the attitude drifts with the gyroscope bias it has not learnt. Per angle, in rad:
/// - inclination² = `inclinationFloor`² + (`inclinationTiming` · |ω_horizontal|)² + drift² + atan(a)²:
///   drift grows by the filter's horizontal bias σ (`AttitudeFilter.gyroscopeBiasEarthVariance`) per second and
///   relaxes at the accelerometer's rate dt / τ_acc; `a` is the sustained acceleration the accelerometer
///   cannot tell from a tilt — the specific force low-passed over τ_acc in the earth frame is longer than
///   its length at rest by 1/cos — with `accelerationDeadband` of the length ignored (the accelerometer's own
///   scale errors change it by that much as the device turns);
/// - heading² = reference + drift² + (`gyroscopeScaleError` · θ_vertical)² + (`headingTiming` · |ω_vertical|)²:
///   the reference variance starts at π² and relaxes toward `magneticSigma(accuracy)`² by the filter's magnetic
///   gain at each magnetometer sample that steered the heading; drift grows by the vertical bias σ per second
///   and shrinks by the same gain. θ_vertical is the signed rotation about the vertical that the magnetometer
///   has not yet pulled back (it grows by ω_vertical · dt and shrinks by the same gain): a gyroscope whose
///   scale is off by a fraction turns the heading by that fraction of it, so σ grows while the device keeps
///   turning one way and not while it turns back and forth. While the magnetometer is rejected (gain 0),
///   absent or off its calibration the drift and θ_vertical only grow.
/// The timing terms are the error of a fast rotation at its own timestamp (sampling and sensor latency).
/// The constants were fitted on BROAD's even trials (BENCHMARKS.md, "Device-motion uncertainty"); the rest
/// of the model is the filter's own state. Allocation-free; a few multiplications per sample.
package struct AttitudeUncertainty: Sendable {
    /// Inclination error with a still accelerometer reference, rad (noise, misalignment, reference truth).
    package static let inclinationFloor = 0.2 * Double.pi / 180
    /// Seconds of rotation about a horizontal axis counted as inclination error.
    package static let inclinationTiming = 0.0024
    /// Seconds of rotation about the vertical counted as heading error.
    package static let headingTiming = 0.0016
    /// Gyroscope scale error (a fraction of the rotation), seen about the vertical.
    package static let gyroscopeScaleError = 0.004
    /// Share of the specific force's length that changes without acceleration (accelerometer scale error).
    package static let accelerationDeadband = 0.03
    /// Heading error of a magnetic reference by calibration accuracy, rad.
    package static func magneticSigma(_ accuracy: MagneticFieldAccuracy) -> Double {
        switch accuracy {
        // What is left at rest once the drift and scale terms have relaxed: the smallest floor that keeps
        // BROAD's still samples 95 % within 2σ (moving samples alone pushed it to the search's bound, and
        // at rest σ was then too small). BROAD cannot tell low from medium: both are twice high.
        case .high: 0.2 * Double.pi / 180
        case .medium, .low: 0.4 * Double.pi / 180
        case .uncalibrated: 3.6 * Double.pi / 180
        }
    }

    /// σ of the drift parts, rad.
    private var inclinationDrift = 0.0
    private var headingDrift = 0.0
    /// Rotation about the vertical not yet pulled back by the magnetometer, rad (signed).
    private var verticalRotation = 0.0
    /// Variance of the magnetic reference part, rad².
    private var headingReference = Double.pi * Double.pi
    /// Specific force low-passed in the earth frame, g; and its length at rest, g.
    private var lowPassedForce = Vector3(0, 0, -1)
    private var restForceNorm = 1.0
    private var acceleration = 0.0
    private var horizontalRate = 0.0
    private var verticalRate = 0.0

    /// Starts uncertain: heading 180° until the magnetometer has steered it.
    package init() {}

    /// Inclination variance, rad².
    package var inclinationVariance: Double {
        let tilt = atan(acceleration)
        return square(Self.inclinationFloor) + square(Self.inclinationTiming * horizontalRate)
            + square(inclinationDrift) + tilt * tilt
    }
    /// Heading variance, rad² (at most π²).
    package var headingVariance: Double {
        min(
            headingReference + square(headingDrift) + square(Self.gyroscopeScaleError * verticalRotation)
                + square(Self.headingTiming * verticalRate),
            square(Double.pi)
        )
    }
    /// The sustained acceleration the inclination term counts, g (0 within the dead band).
    package var sustainedAcceleration: Double { acceleration }
    /// 1-σ inclination error, degrees.
    package var inclinationDegrees: Double { inclinationVariance.squareRoot() * 180 / .pi }
    /// 1-σ heading error, degrees.
    package var headingDegrees: Double { headingVariance.squareRoot() * 180 / .pi }

    /// Advances by `dt` s (0 for the first output).
    /// - Parameters:
    ///   - rotationRate: bias-corrected gyroscope in the earth frame (z up), rad/s.
    ///   - specificForce: the accelerometer in the earth frame, g, when the filter used a sample in this update.
    ///   - atRest: the filter's rest detection (the force's length at rest is learnt then).
    ///   - biasVariance: the filter's bias variance about the horizontal axes and the vertical, (rad/s)².
    ///   - accelerometerTau: the filter's accelerometer time constant, s.
    ///   - magneticGain: the filter's heading-correction gain when a magnetometer sample was used (0 while it
    ///     rejects a disturbance); nil when none was.
    ///   - magneticAccuracy: the calibration's accuracy.
    package mutating func update(
        dt: Double,
        rotationRate: Vector3,
        specificForce: Vector3?,
        atRest: Bool,
        biasVariance: (horizontal: Double, vertical: Double),
        accelerometerTau: Double,
        magneticGain: Double?,
        magneticAccuracy: MagneticFieldAccuracy
    ) {
        // dt is 0 at the first output, whose magnetometer sample the filter follows in full.
        guard dt >= 0, dt.isFinite, rotationRate.isFinite else { return }
        horizontalRate = (square(rotationRate.x) + square(rotationRate.y)).squareRoot()
        verticalRate = abs(rotationRate.z)
        inclinationDrift = min(inclinationDrift + max(biasVariance.horizontal, 0).squareRoot() * dt, Double.pi)
        headingDrift = min(headingDrift + max(biasVariance.vertical, 0).squareRoot() * dt, Double.pi)
        verticalRotation += rotationRate.z * dt
        if let f = specificForce, f.isFinite {
            let k = dt / (accelerometerTau + dt)
            inclinationDrift -= k * inclinationDrift
            lowPassedForce += k * (f - lowPassedForce)
            if atRest { restForceNorm += k * (f.norm - restForceNorm) }
            let excess = lowPassedForce.norm / restForceNorm - 1 - Self.accelerationDeadband
            // |f| = g / cos θ for a tilt θ of the force: 1 / cos θ − 1 ≈ θ² / 2.
            acceleration = excess > 0 ? (2 * excess).squareRoot() : 0
        }
        if let gain = magneticGain, gain.isFinite {
            let k = min(max(gain, 0), 1)
            headingDrift -= k * headingDrift
            verticalRotation -= k * verticalRotation
            headingReference += k * (square(Self.magneticSigma(magneticAccuracy)) - headingReference)
        }
    }
}
