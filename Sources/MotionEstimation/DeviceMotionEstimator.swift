import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Core Motion's device motion from raw samples: calibrates the magnetometer, runs `AttitudeFilter`, and
/// expresses the result in the requested `AttitudeReferenceFrame` with Core Motion's conventions.
///
/// One `DeviceMotion` per accepted gyroscope sample; accelerometer and magnetometer samples arriving
/// without a gyroscope reading are held and used with the next one. Frames:
/// - `xArbitraryZVertical`: the filter's 6-axis attitude, turned so yaw is 0 at the first output (and
///   again whenever this frame is selected).
/// - `xArbitraryCorrectedZVertical`: the 9-axis attitude turned so yaw is 0 at the first output that
///   used the magnetometer (and again whenever selected).
/// - `xMagneticNorthZVertical`: 9-axis, North-West-Up: `q_NWU = q_z(−90°) ⊗ q_ENU`.
/// - `xTrueNorthZVertical`: `q_z(−declination) ⊗ q_NWU` with `declinationDegrees` (east positive) from
///   the World Magnetic Model, supplied by the caller.
///
/// The filter runs all the time with the magnetometer when there is one, so the frame can be switched
/// at run time without a transient. Magnetometer samples are calibrated first; samples the calibrator
/// finds off its sphere (`MagnetometerCalibrator.isConsistent` false: a magnet nearby, or a hard iron that
/// changed and is being re-learnt) are reported in `magneticField` but do not steer the heading.
package struct DeviceMotionEstimator: Sendable {
    package private(set) var filter: AttitudeFilter
    package private(set) var calibrator: MagnetometerCalibrator
    /// 1-σ inclination and heading errors of the latest output (`AttitudeUncertainty`).
    package private(set) var uncertainty = AttitudeUncertainty()
    var lastOutputTime = -Double.infinity

    /// The frame of the attitude in the outputs; may be changed between samples.
    package var referenceFrame: AttitudeReferenceFrame {
        didSet {
            if referenceFrame != oldValue { yawCaptured = false }
        }
    }

    /// Magnetic declination, degrees east of true north, for `xTrueNorthZVertical`.
    package var declinationDegrees: Double {
        didSet { trueFromMagnetic = Quaternion.aboutZ(-declinationDegrees * .pi / 180) }
    }

    /// q_z(−declination), kept so the per-sample path computes no trigonometry for it.
    var trueFromMagnetic: Quaternion

    var pendingAcceleration: Vector3?
    var pendingMagneticField: Vector3?
    var lastAcceleration: Vector3?
    var lastMagneticField: Vector3?
    /// q_z(−yaw at start) for the arbitrary frames, kept so the per-sample path computes no trigonometry.
    var yawCorrection = Quaternion.identity
    var yawCaptured = false

    /// - Parameters:
    ///   - sampleInterval: expected seconds between gyroscope samples (1 / rate); the filter adapts to the
    ///     measured intervals.
    package init(
        referenceFrame: AttitudeReferenceFrame = .xArbitraryZVertical,
        sampleInterval: Double,
        parameters: AttitudeFilterParameters = .default,
        declinationDegrees: Double = 0
    ) {
        self.filter = AttitudeFilter(sampleInterval: sampleInterval, parameters: parameters)
        self.calibrator = MagnetometerCalibrator()
        self.referenceFrame = referenceFrame
        self.declinationDegrees = declinationDegrees
        self.trueFromMagnetic = Quaternion.aboutZ(-declinationDegrees * .pi / 180)
    }

    // MARK: - Persistence

    package var persistentState: DeviceMotionEstimatorState {
        DeviceMotionEstimatorState(filter: filter.persistentState, magnetometer: calibrator.persistentState)
    }

    package mutating func restore(_ state: DeviceMotionEstimatorState) {
        filter.restore(state.filter)
        calibrator.restore(state.magnetometer)
    }

    // MARK: - Update

    /// Feeds one sample (Core Motion's units and signs, see `IMUSample`); returns the device motion when
    /// the sample carried an accepted gyroscope reading, nil otherwise.
    package mutating func update(_ sample: IMUSample) -> DeviceMotion? {
        if let a = sample.acceleration, a.isFinite {
            pendingAcceleration = a
            lastAcceleration = a
        }
        if let m = sample.magneticField, m.isFinite, m.squaredNorm > 0, sample.timestamp.isFinite {
            let calibrated = calibrator.update(m, timestamp: sample.timestamp)
            // A sample off the calibrated sphere is disturbed or meets an outdated calibration: it is
            // reported but does not steer the heading (VQF's own norm/dip test needs a reference first).
            pendingMagneticField = calibrator.isConsistent ? calibrated : nil
            lastMagneticField = calibrated
        }
        guard let gyroscope = sample.rotationRate else { return nil }

        // The filter wants VQF's specific force in m/s²: f = −a · g0.
        let force = pendingAcceleration.map { $0 * -standardGravity }
        let used = filter.update(
            timestamp: sample.timestamp,
            gyroscope: gyroscope,
            specificForce: force,
            magneticField: pendingMagneticField
        )
        guard used.contains(.gyroscope) else { return nil }
        if used.contains(.accelerometer) { pendingAcceleration = nil }
        if used.contains(.magnetometer) { pendingMagneticField = nil }

        let q6 = filter.quaternion6D
        let attitude: Quaternion
        switch referenceFrame {
        case .xArbitraryZVertical:
            if !yawCaptured {
                yawCorrection = Quaternion.aboutZ(-q6.yaw)
                yawCaptured = true
            }
            attitude = yawCorrection * q6
        case .xArbitraryCorrectedZVertical:
            let north = northWestUp
            if !yawCaptured {
                yawCorrection = Quaternion.aboutZ(-north.yaw)
                // Until a magnetometer sample has been used the 9D heading is still the 6D one.
                yawCaptured = used.contains(.magnetometer)
            }
            attitude = yawCorrection * north
        case .xMagneticNorthZVertical:
            attitude = northWestUp
        case .xTrueNorthZVertical:
            attitude = trueFromMagnetic * northWestUp
        }

        let gravity = q6.inverseRotate(Vector3(0, 0, -1))
        let user = lastAcceleration.map { $0 - gravity } ?? .zero
        let rate = gyroscope - filter.gyroscopeBias
        uncertainty.update(
            dt: lastOutputTime.isFinite ? sample.timestamp - lastOutputTime : 0,
            rotationRate: q6.rotate(rate),
            specificForce: used.contains(.accelerometer) ? lastAcceleration.map { q6.rotate($0) } : nil,
            atRest: filter.isAtRest,
            biasVariance: filter.gyroscopeBiasEarthVariance,
            accelerometerTau: filter.parameters.accelerometerTau,
            magneticGain: used.contains(.magnetometer) ? filter.magneticGain : nil,
            magneticAccuracy: calibrator.accuracy
        )
        lastOutputTime = sample.timestamp
        let heading: Double
        if referenceFrame.isNorthReferenced {
            // The yaw of the z-x′-y″ sequence is the direction of the device's y axis minus 90°,
            // counter-clockwise; a compass heading is clockwise.
            // yaw = atan2(−m12, m22) of the z-x′-y″ sequence, without the rest of the Euler angles.
            let q = attitude
            let yaw = atan2(2 * (q.w * q.z - q.x * q.y), 1 - 2 * (q.x * q.x + q.z * q.z))
            var h = 270 - yaw * 180 / .pi
            h = h.truncatingRemainder(dividingBy: 360)
            if h < 0 { h += 360 }
            heading = h >= 360 ? 0 : h
        } else {
            heading = -1
        }
        return DeviceMotion(
            timestamp: sample.timestamp,
            attitude: attitude,
            rotationRate: rate,
            gravity: gravity,
            userAcceleration: user,
            magneticField: lastMagneticField ?? .zero,
            magneticFieldAccuracy: lastMagneticField == nil ? .uncalibrated : calibrator.accuracy,
            heading: heading,
            referenceFrame: referenceFrame,
            inclinationAccuracy: uncertainty.inclinationDegrees,
            // The 6-axis yaw of xArbitraryZVertical is not what the magnetometer keeps in check.
            headingAccuracy: referenceFrame == .xArbitraryZVertical ? -1 : uncertainty.headingDegrees
        )
    }

    /// The 9-axis attitude in North-West-Up.
    var northWestUp: Quaternion { Self.northWestUpFromEastNorthUp * filter.quaternion9D }

    /// q_z(−90°): East-North-Up to North-West-Up.
    static let northWestUpFromEastNorthUp = Quaternion(w: 0.5.squareRoot(), x: 0, y: 0, z: -(0.5.squareRoot()))
}
