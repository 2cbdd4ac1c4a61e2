import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A Swift port of VQF 2.1.2 (vqf.cpp / vqf.hpp and pyvqf.py from the `vqf` package on PyPI):
// D. Laidig and T. Seel, "VQF: Highly accurate IMU orientation estimation with bias estimation and magnetic
// disturbance rejection", Information Fusion 91 (2023) 187–204, doi:10.1016/j.inffus.2022.10.014.
//
// VQF is Copyright (c) 2021 Daniel Laidig <laidig@control.tu-berlin.de>, released under the MIT License:
//
//   Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
//   associated documentation files (the "Software"), to deal in the Software without restriction, including
//   without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
//   copies of the Software, and to permit persons to whom the Software is furnished to do so, subject to the
//   following conditions:
//
//   The above copyright notice and this permission notice shall be included in all copies or substantial
//   portions of the Software.
//
//   THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT
//   LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO
//   EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER
//   IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR
//   THE USE OR OTHER DEALINGS IN THE SOFTWARE.
//
// What differs from vqf.cpp, and why:
// - Time comes from timestamps. The gyroscope is integrated over each sample's own interval and the rest
//   and magnetic timers advance by the measured intervals. The low-pass coefficients are computed for the
//   mean interval of each sensor and recomputed (keeping the filter outputs continuous) when the mean
//   moves by more than 5 %, so a device whose rate differs from the configured one still gets the
//   documented time constants.
// - A gap longer than `maximumGap` is not integrated; see `AttitudeFilterParameters.maximumGap`. The first
//   accelerometer update after a gap skips the in-motion bias update, whose inclination disagreement would
//   otherwise contain the whole unobserved rotation.
// - Bad input is rejected per sample (see `update`), so the state never sees NaN, zero vectors or
//   non-increasing timestamps.
// - Inputs and outputs use this project's types; no arrays, so an update allocates nothing.

/// The orientation filter behind device motion: VQF (see the notice above) with per-sample timestamps.
///
/// Conventions are VQF's, not Core Motion's: the accelerometer input is the specific force in m/s² (+9.81
/// on the axis pointing up at rest), the 9-axis output frame is East-North-Up, the 6-axis output frame has
/// z up and an arbitrary yaw. `DeviceMotionEstimator` converts to and from Core Motion's conventions.
package struct AttitudeFilter: Sendable {
    /// Which parts of a sample `update` used.
    package struct Update: OptionSet, Sendable, Hashable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The gyroscope sample was accepted (and integrated unless `gap` is set).
        package static let gyroscope = Update(rawValue: 1)
        package static let accelerometer = Update(rawValue: 2)
        package static let magnetometer = Update(rawValue: 4)
        /// The interval since the last accepted sample exceeded `maximumGap` and was not integrated.
        package static let gap = Update(rawValue: 8)
    }

    struct Coefficients: Sendable {
        var acc: LowPassCoefficients
        var restGyroscope: LowPassCoefficients
        var restAccelerometer: LowPassCoefficients
        var magNormDip: LowPassCoefficients
        var kMag: Double
        var kMagRef: Double
        var biasP0: Double
        var biasV: Double
        var biasMotionW: Double
        var biasVerticalW: Double
        var biasRestW: Double
    }

    /// The timestamp and mean interval of one sensor's samples.
    struct SampleClock: Sendable {
        var lastTimestamp = Double.nan
        /// Seconds; what the coefficients were last computed for is kept in `Coefficients`.
        var meanInterval: Double
    }

    package let parameters: AttitudeFilterParameters
    var coefficients: Coefficients
    var gyroscopeClock: SampleClock
    var accelerometerClock: SampleClock
    var magnetometerClock: SampleClock

    // VQF's state (vqf.hpp `VQFState`), same names where the meaning is the same.
    var gyrQuat = Quaternion.identity
    var accQuat = Quaternion.identity
    var delta = 0.0
    var restDetected = false
    var magDistDetected = true
    var accLowPass = VectorLowPass()
    var kMagInit = 1.0
    var lastMagDisAngle = 0.0
    /// The gain of the latest heading correction (0 while rejected), for `AttitudeUncertainty`.
    var lastMagGain = 0.0
    var bias = Vector3.zero
    var biasP = Matrix3x3.zero
    var motionBiasR0 = VectorLowPass()
    var motionBiasR1 = VectorLowPass()
    var motionBiasR2 = VectorLowPass()
    var motionBiasLowPass = VectorLowPass()
    var restSquaredDeviationGyroscope = 0.0
    var restSquaredDeviationAccelerometer = 0.0
    var restT = 0.0
    var restGyroscopeLowPass = VectorLowPass()
    var restAccelerometerLowPass = VectorLowPass()
    var magRefNorm = 0.0
    var magRefDip = 0.0
    var magUndisturbedT = 0.0
    var magRejectT: Double
    var magCandidateNorm = -1.0
    var magCandidateDip = 0.0
    var magCandidateT = 0.0
    var magNormDipLowPass = VectorLowPass()
    var skipMotionBiasOnce = false

    /// - Parameters:
    ///   - sampleInterval: the expected time between gyroscope samples, s (1 / rate). The filter adapts
    ///     to the measured intervals; this only seeds the coefficients.
    package init(sampleInterval: Double, parameters: AttitudeFilterParameters = .default) {
        let ts = sampleInterval.isFinite && sampleInterval > 0 ? sampleInterval : 0.01
        self.parameters = parameters
        coefficients = Self.coefficients(parameters, gyroscope: ts, accelerometer: ts, magnetometer: ts)
        gyroscopeClock = SampleClock(meanInterval: ts)
        accelerometerClock = SampleClock(meanInterval: ts)
        magnetometerClock = SampleClock(meanInterval: ts)
        magRejectT = parameters.magneticMaximumRejectionTime
        biasP = Matrix3x3(diagonal: coefficients.biasP0)
    }

    static func coefficients(
        _ p: AttitudeFilterParameters,
        gyroscope: Double,
        accelerometer: Double,
        magnetometer: Double
    ) -> Coefficients {
        // Bias variances are in (0.01 °/s)², as in vqf.cpp `setup`.
        let biasP0 = square(p.biasSigmaInitial * 100)
        // The system noise raises the variance from 0 to (0.1 °/s)² in biasForgettingTime.
        let biasV = square(0.1 * 100) * accelerometer / p.biasForgettingTime
        let pMotion = square(p.biasSigmaMotion * 100)
        let biasMotionW = square(pMotion) / biasV + pMotion
        let pRest = square(p.biasSigmaRest * 100)
        return Coefficients(
            acc: LowPassCoefficients(tau: p.accelerometerTau, interval: accelerometer),
            restGyroscope: LowPassCoefficients(tau: p.restFilterTau, interval: gyroscope),
            restAccelerometer: LowPassCoefficients(tau: p.restFilterTau, interval: accelerometer),
            magNormDip: LowPassCoefficients(tau: max(p.magneticCurrentTau, 0), interval: magnetometer),
            kMag: gainFromTau(p.magnetometerTau, magnetometer),
            kMagRef: gainFromTau(p.magneticReferenceTau, magnetometer),
            biasP0: biasP0,
            biasV: biasV,
            biasMotionW: biasMotionW,
            biasVerticalW: biasMotionW / max(p.biasVerticalForgettingFactor, 1e-10),
            biasRestW: square(pRest) / biasV + pRest
        )
    }

    /// vqf.cpp `gainFromTau`: the first-order gain for time constant `tau`; negative disables, 0 passes.
    static func gainFromTau(_ tau: Double, _ interval: Double) -> Double {
        if tau < 0 { return 0 }
        if tau == 0 { return 1 }
        return 1 - exp(-interval / tau)
    }

    // MARK: - Outputs

    /// Attitude from the gyroscope alone, sensor → an arbitrary frame fixed at start.
    package var quaternion3D: Quaternion { gyrQuat }
    /// Attitude from gyroscope and accelerometer, sensor → a frame with z up and arbitrary yaw.
    package var quaternion6D: Quaternion { accQuat * gyrQuat }
    /// Attitude from all three sensors, sensor → East-North-Up.
    package var quaternion9D: Quaternion { Quaternion.aboutZ(delta) * (accQuat * gyrQuat) }
    /// The heading correction from the 6D to the 9D frame, rad in [−π, π].
    package var headingCorrection: Double { delta }
    /// Gyroscope bias estimate, rad/s, device axes.
    package var gyroscopeBias: Vector3 { bias }
    /// Standard deviation of the bias estimate, rad/s (an upper bound over the axes, vqf.cpp `getBiasEstimate`).
    package var gyroscopeBiasSigma: Double {
        min(biasP.maxAbsoluteRowSum, coefficients.biasP0).squareRoot() * (Double.pi / 100 / 180)
    }
    /// Whether the device is at rest (still for `restMinimumTime`).
    package var isAtRest: Bool { restDetected }
    /// Whether the magnetic field currently differs from the reference (heading correction paused).
    package var isMagneticDisturbanceDetected: Bool { magDistDetected }
    /// The share of the full magnetic correction gain the heading gets now: 1 undisturbed, 0 while a
    /// disturbance is being rejected, 1 / `magneticRejectionFactor` after the longest rejection.
    package var magneticGainScale: Double {
        guard parameters.magneticDisturbanceRejection, magDistDetected else { return 1 }
        return magRejectT <= parameters.magneticMaximumRejectionTime ? 0 : 1 / parameters.magneticRejectionFactor
    }
    /// The share of the heading disagreement the latest magnetometer sample corrected (0 while a
    /// disturbance is rejected; larger during the fast initial convergence).
    package var magneticGain: Double { lastMagGain }
    /// The latest disagreement between the magnetometer's heading and the filter's, rad in [−π, π].
    package var magneticDisagreement: Double { lastMagDisAngle }
    /// Variance of the bias estimate in the earth frame, (rad/s)²: summed over the two horizontal axes
    /// (what tilts the inclination) and about the vertical (what turns the heading).
    package var gyroscopeBiasEarthVariance: (horizontal: Double, vertical: Double) {
        let q = quaternion6D
        let (w, x, y, z) = (q.w, q.x, q.y, q.z)
        let r0 = Vector3(1 - 2 * y * y - 2 * z * z, 2 * (x * y - w * z), 2 * (x * z + w * y))
        let r1 = Vector3(2 * (x * y + w * z), 1 - 2 * x * x - 2 * z * z, 2 * (y * z - w * x))
        let r2 = Vector3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * x * x - 2 * y * y)
        let unit = square(Double.pi / 100 / 180)
        return (
            (r0.dot(biasP * r0) + r1.dot(biasP * r1)) * unit,
            r2.dot(biasP * r2) * unit
        )
    }
    /// The accepted reference field: norm (magnetometer unit, 0 before one is accepted) and dip (rad).
    package var magneticReference: (norm: Double, dip: Double) { (magRefNorm, magRefDip) }

    // MARK: - Persistence

    /// The slowly learned state to keep across restarts.
    package var persistentState: AttitudeFilterState {
        AttitudeFilterState(
            gyroscopeBias: bias,
            gyroscopeBiasSigma: gyroscopeBiasSigma,
            magneticReferenceNorm: magRefNorm,
            magneticReferenceDip: magRefDip
        )
    }

    /// Restores a saved state (vqf.cpp `setBiasEstimate` and `setMagRef`). Non-finite values are ignored;
    /// the bias is clipped to `biasClip`.
    package mutating func restore(_ saved: AttitudeFilterState) {
        if saved.gyroscopeBias.isFinite {
            bias = clip(saved.gyroscopeBias, parameters.biasClip * .pi / 180)
        }
        if saved.gyroscopeBiasSigma.isFinite, saved.gyroscopeBiasSigma > 0 {
            biasP = Matrix3x3(diagonal: square(saved.gyroscopeBiasSigma * (180 * 100 / Double.pi)))
        }
        if saved.magneticReferenceNorm.isFinite, saved.magneticReferenceDip.isFinite, saved.magneticReferenceNorm >= 0 {
            magRefNorm = saved.magneticReferenceNorm
            magRefDip = saved.magneticReferenceDip
        }
    }

    // MARK: - Update

    /// Feeds one gyroscope sample with the accelerometer and magnetometer samples taken since the last one.
    ///
    /// - Parameters:
    ///   - timestamp: seconds on the sensor clock, strictly increasing.
    ///   - gyroscope: rad/s, raw (bias included).
    ///   - specificForce: m/s², VQF's sign (+9.81 up at rest), or nil when none arrived.
    ///   - magneticField: any unit (µT here), calibrated for hard and soft iron, or nil.
    /// - Returns: what was used. Rejected without touching the state: a non-finite timestamp or gyroscope
    ///   sample (nothing is used), a timestamp not after the previous one (nothing is used; the clock
    ///   resynchronises so the next sample is accepted), a non-finite, zero or absurd (> 1000 m/s²)
    ///   specific force, a non-finite or zero magnetic field (those parts are skipped).
    @discardableResult
    package mutating func update(
        timestamp: Double,
        gyroscope: Vector3,
        specificForce: Vector3?,
        magneticField: Vector3?
    )
        -> Update
    {
        guard timestamp.isFinite, gyroscope.isFinite else { return [] }
        var used: Update = [.gyroscope]
        let last = gyroscopeClock.lastTimestamp
        if last.isNaN {
            integrateGyroscope(gyroscope, interval: coefficients.restGyroscope.interval)
        } else {
            let dt = timestamp - last
            guard dt > 0 else {
                gyroscopeClock.lastTimestamp = timestamp
                return []
            }
            if dt > parameters.maximumGap {
                beginAfterGap()
                used.insert(.gap)
            } else {
                observe(dt, sensor: 0)
                integrateGyroscope(gyroscope, interval: dt)
            }
        }
        gyroscopeClock.lastTimestamp = timestamp

        if let f = specificForce, f.isFinite {
            let n2 = f.squaredNorm
            if n2 > 0, n2 < 1e6 {
                let dt = interval(since: timestamp, sensor: 1)
                updateAccelerometer(f, interval: dt)
                used.insert(.accelerometer)
            }
        }
        if let m = magneticField, m.isFinite, m.squaredNorm > 0 {
            let dt = interval(since: timestamp, sensor: 2)
            updateMagnetometer(m, interval: dt)
            used.insert(.magnetometer)
        }
        return used
    }

    /// The interval since this sensor's last sample (its mean interval for the first one or after a gap),
    /// and the clock advanced. Sensor 1 is the accelerometer, 2 the magnetometer.
    private mutating func interval(since timestamp: Double, sensor: Int) -> Double {
        let clock = sensor == 1 ? accelerometerClock : magnetometerClock
        if sensor == 1 {
            accelerometerClock.lastTimestamp = timestamp
        } else {
            magnetometerClock.lastTimestamp = timestamp
        }
        let dt = timestamp - clock.lastTimestamp
        guard !clock.lastTimestamp.isNaN, dt > 0, dt <= parameters.maximumGap else { return clock.meanInterval }
        observe(dt, sensor: sensor)
        return dt
    }

    /// Tracks a sensor's mean interval (0 gyroscope, 1 accelerometer, 2 magnetometer) and retunes its
    /// coefficients when the mean has moved by more than 5 % from what they were computed for.
    private mutating func observe(_ dt: Double, sensor: Int) {
        // 1 % per sample: averages jitter over ~100 samples, follows a rate change within a few hundred.
        let mean: Double
        let tuned: Double
        switch sensor {
        case 0:
            gyroscopeClock.meanInterval += 0.01 * (dt - gyroscopeClock.meanInterval)
            mean = gyroscopeClock.meanInterval
            tuned = coefficients.restGyroscope.interval
        case 1:
            accelerometerClock.meanInterval += 0.01 * (dt - accelerometerClock.meanInterval)
            mean = accelerometerClock.meanInterval
            tuned = coefficients.acc.interval
        default:
            magnetometerClock.meanInterval += 0.01 * (dt - magnetometerClock.meanInterval)
            mean = magnetometerClock.meanInterval
            tuned = coefficients.magNormDip.interval
        }
        if abs(mean - tuned) > 0.05 * tuned {
            retune(sensor: sensor, interval: mean)
        }
    }

    private mutating func retune(sensor: Int, interval: Double) {
        var c = Self.coefficients(
            parameters,
            gyroscope: sensor == 0 ? interval : coefficients.restGyroscope.interval,
            accelerometer: sensor == 1 ? interval : coefficients.acc.interval,
            magnetometer: sensor == 2 ? interval : coefficients.magNormDip.interval
        )
        c.biasP0 = coefficients.biasP0
        accLowPass.adapt(from: coefficients.acc, to: c.acc)
        motionBiasR0.adapt(from: coefficients.acc, to: c.acc)
        motionBiasR1.adapt(from: coefficients.acc, to: c.acc)
        motionBiasR2.adapt(from: coefficients.acc, to: c.acc)
        motionBiasLowPass.adapt(from: coefficients.acc, to: c.acc)
        restGyroscopeLowPass.adapt(from: coefficients.restGyroscope, to: c.restGyroscope)
        restAccelerometerLowPass.adapt(from: coefficients.restAccelerometer, to: c.restAccelerometer)
        magNormDipLowPass.adapt(from: coefficients.magNormDip, to: c.magNormDip)
        coefficients = c
    }

    /// After a gap: keep attitude, bias and magnetic reference; restart what assumed continuity.
    private mutating func beginAfterGap() {
        accLowPass.reset()
        motionBiasR0.reset()
        motionBiasR1.reset()
        motionBiasR2.reset()
        motionBiasLowPass.reset()
        restGyroscopeLowPass.reset()
        restAccelerometerLowPass.reset()
        magNormDipLowPass.reset()
        restT = 0
        restDetected = false
        kMagInit = 1
        skipMotionBiasOnce = true
        accelerometerClock.lastTimestamp = .nan
        magnetometerClock.lastTimestamp = .nan
    }

    /// vqf.cpp `updateGyr`: rest detection on the gyroscope, then strapdown integration of the rate
    /// minus the bias estimate over `interval` seconds.
    @inline(__always)
    private mutating func integrateGyroscope(_ gyr: Vector3, interval: Double) {
        if parameters.restBiasEstimation || parameters.magneticDisturbanceRejection {
            detectRest(gyroscope: gyr)
        }
        let w = gyr - bias
        let n = w.norm
        if n > Double.ulpOfOne {
            let half = n * interval / 2
            let s = sin(half) / n
            gyrQuat = normalized(gyrQuat * Quaternion(w: cos(half), x: s * w.x, y: s * w.y, z: s * w.z))
        }
    }

    /// vqf.cpp `updateAcc`: rest detection, low-pass in the almost-inertial frame, inclination correction,
    /// bias estimation.
    @inline(__always)
    private mutating func updateAccelerometer(_ acc: Vector3, interval: Double) {
        if parameters.restBiasEstimation {
            detectRest(specificForce: acc, interval: interval)
        }
        // Low-pass in the almost-inertial frame, so rotation does not smear the gravity direction.
        let lastAccLp = accLowPass.step(gyrQuat.rotate(acc), coefficients.acc)
        let accEarth = normalizedIfPossible(accQuat.rotate(lastAccLp))

        // Inclination correction: the smallest rotation taking accEarth to +z.
        let qw = ((accEarth.z + 1) / 2).squareRoot()
        let correction: Quaternion
        if qw > 1e-6 {
            correction = Quaternion(w: qw, x: 0.5 * accEarth.y / qw, y: -0.5 * accEarth.x / qw, z: 0)
        } else {
            // Within 0.00011° of 180°: any horizontal axis will do.
            correction = Quaternion(w: 0, x: 1, y: 0, z: 0)
        }
        accQuat = normalized(correction * accQuat)

        if parameters.motionBiasEstimation || parameters.restBiasEstimation {
            estimateBias(accEarth: accEarth)
        }
    }
}

@inline(__always) func square(_ x: Double) -> Double { x * x }

@inline(__always) func clip(_ v: Vector3, _ limit: Double) -> Vector3 {
    Vector3(min(max(v.x, -limit), limit), min(max(v.y, -limit), limit), min(max(v.z, -limit), limit))
}

/// vqf.cpp `normalize`: leaves vectors shorter than machine epsilon alone.
@inline(__always) func normalizedIfPossible(_ v: Vector3) -> Vector3 {
    let n = v.norm
    return n < Double.ulpOfOne ? v : v / n
}

@inline(__always) func normalized(_ q: Quaternion) -> Quaternion {
    let n = q.norm
    return n < Double.ulpOfOne ? q : Quaternion(w: q.w / n, x: q.x / n, y: q.y / n, z: q.z / n)
}
