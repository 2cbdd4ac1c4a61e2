import AgentConfig
import AgentPorts
import MotionEstimation
import MotionModel
import MotionWire

/// `{root}/device-motion`: Core Motion's `CMDeviceMotion` — attitude in the selected reference frame,
/// bias-free rotation rate, gravity, user acceleration, calibrated magnetic field and heading.
///
/// The estimator sees every gyroscope sample at the estimation rate (at least `minimumEstimationRateHz`,
/// whatever the publication rate), because an orientation filter's accuracy depends on how densely it
/// integrates; the stream publishes at its own rate.
public final class DeviceMotionStream: MotionStream, @unchecked Sendable {
    public let name = StreamName.deviceMotion
    public private(set) var settings: StreamSettings
    public private(set) var effectiveRateHz: Double = 0
    public private(set) var estimator: DeviceMotionEstimator

    /// Core Motion fuses at 100 Hz or more whatever interval an app asks for; so do we.
    public static let minimumEstimationRateHz = 100.0

    private var decimator = Decimator(rateHz: 0, hardwareRateHz: 0)
    private var batcher = SampleBatcher(kind: .deviceMotion)
    private var topicID = -1
    private var seq: UInt64 = 0
    private var estimationRateHz = 0.0
    /// Offline processing publishes one message per gyroscope sample, undecimated.
    public var publishesEverySample = false
    /// From the World Magnetic Model at the configured location; nil: judged from the measured field.
    public var expectedHeadingUsability: WorldMagneticModel.HeadingUsability?
    /// The horizontal component of the calibrated field, nT, smoothed over about two seconds.
    public private(set) var measuredHorizontalNanotesla = Double.nan

    public init(settings: StreamSettings, referenceFrame: AttitudeReferenceFrame, declinationDegrees: Double) {
        self.settings = settings
        estimator = DeviceMotionEstimator(
            referenceFrame: referenceFrame,
            sampleInterval: 1 / Self.minimumEstimationRateHz,
            declinationDegrees: declinationDegrees
        )
    }

    public var requiredSensors: Set<SensorType> {
        estimator.referenceFrame.needsMagnetometer
            ? [.accelerometer, .gyroscope, .magnetometer] : [.accelerometer, .gyroscope]
    }

    public var referenceFrame: AttitudeReferenceFrame {
        get { estimator.referenceFrame }
        set { estimator.referenceFrame = newValue }
    }

    public var declinationDegrees: Double {
        get { estimator.declinationDegrees }
        set { estimator.declinationDegrees = newValue }
    }

    /// Gyroscope bias and magnetometer calibration, to persist across restarts.
    public var persistentState: DeviceMotionEstimatorState { estimator.persistentState }

    public func restore(_ state: DeviceMotionEstimatorState) {
        estimator.restore(state)
    }

    public func sensorDemandsHz(settings: StreamSettings) -> [SensorType: Double] {
        guard settings.enabled else { return [:] }
        let rate = max(settings.rateHz, Self.minimumEstimationRateHz)
        var demands: [SensorType: Double] = [.gyroscope: rate, .accelerometer: rate]
        // The magnetometer only when the frame uses it: an arbitrary-yaw frame does not need it powered.
        if estimator.referenceFrame.needsMagnetometer { demands[.magnetometer] = min(rate, 100) }
        return demands
    }

    public func configure(settings: StreamSettings, sensorRatesHz: [SensorType: Double], topicID: Int) {
        self.settings = settings
        self.topicID = topicID
        batcher.configure(size: settings.batch, encoding: settings.encoding, jsonBytesPerSample: 900)
        let gyroRate = sensorRatesHz[.gyroscope] ?? 0
        let haveAccel = sensorRatesHz[.accelerometer] != nil
        let haveMag = !estimator.referenceFrame.needsMagnetometer || sensorRatesHz[.magnetometer] != nil
        let running = settings.enabled && gyroRate > 0 && haveAccel && haveMag
        effectiveRateHz = running ? min(settings.rateHz, gyroRate) : 0
        decimator = Decimator(rateHz: effectiveRateHz, hardwareRateHz: gyroRate)
        estimationRateHz = gyroRate
    }

    public func consume(_ sample: IMUSample, context: inout StreamContext) {
        guard effectiveRateHz > 0 else { return }
        // Every sample feeds the estimator; only due ones are published.
        guard var motion = estimator.update(sample) else { return }
        let due = publishesEverySample || decimator.accept(motion.timestamp)
        let north = motion.referenceFrame.isNorthReferenced
        if north { trackHorizontalField(motion) }
        guard due else { return }
        if north { limitHeading(&motion) }
        seq += 1
        if !batcher.isSingle && batcher.encoding == .binary {
            let wall = context.clock.wallTime(of: motion.timestamp)
            batcher.addBinary(seq: seq, topicID: topicID, settings: settings, context: &context) { b in
                Self.encodeBinary(motion, wallTime: wall, into: &b)
            }
            return
        }
        context.beginMessage(seq: seq, timestamp: motion.timestamp)
        Self.encode(motion, into: &context.buffer)
        context.buffer.byte(UInt8(ascii: "}"))
        if batcher.isSingle {
            context.publishBuffer(topicID: topicID, settings: settings)
        } else {
            batcher.addJSON(seq: seq, topicID: topicID, settings: settings, context: &context)
        }
    }

    public func flush(context: inout StreamContext) {
        batcher.flush(topicID: topicID, settings: settings, context: &context)
    }

    /// The 88-byte binary record (layout in `SampleBatcher`).
    static func encodeBinary(_ m: DeviceMotion, wallTime: Double, into b: inout [UInt8]) {
        BinaryRecord.append(m.timestamp, to: &b)
        BinaryRecord.append(wallTime, to: &b)
        BinaryRecord.append(Float(m.attitude.x), to: &b)
        BinaryRecord.append(Float(m.attitude.y), to: &b)
        BinaryRecord.append(Float(m.attitude.z), to: &b)
        BinaryRecord.append(Float(m.attitude.w), to: &b)
        BinaryRecord.append(m.rotationRate, to: &b)
        BinaryRecord.append(m.gravity, to: &b)
        BinaryRecord.append(m.userAcceleration, to: &b)
        BinaryRecord.append(m.magneticField, to: &b)
        BinaryRecord.append(Float(m.heading), to: &b)
        let accuracy: UInt8 =
            switch m.magneticFieldAccuracy {
            case .uncalibrated: 0
            case .low: 1
            case .medium: 2
            case .high: 3
            }
        let frame: UInt8 =
            switch m.referenceFrame {
            case .xArbitraryZVertical: 0
            case .xArbitraryCorrectedZVertical: 1
            case .xMagneticNorthZVertical: 2
            case .xTrueNorthZVertical: 3
            }
        b.append(accuracy)
        b.append(frame)
        b.append(0)
        b.append(0)
    }

    /// A compass needs a horizontal field: below 6000 nT the heading is downgraded (accuracy at most low),
    /// below 2000 nT (near the magnetic poles, or inside steel) it is refused (−1). WMM2025's report gives the
    /// thresholds ("blackout" and "caution" zones).
    private func limitHeading(_ motion: inout DeviceMotion) {
        let usability =
            expectedHeadingUsability
            ?? (measuredHorizontalNanotesla.isNaN
                ? .normal : WorldMagneticModel.HeadingUsability(horizontalNanotesla: measuredHorizontalNanotesla))
        switch usability {
        case .normal: break
        case .degraded: motion.magneticFieldAccuracy = min(motion.magneticFieldAccuracy, .low)
        case .unusable:
            motion.heading = -1
            motion.magneticFieldAccuracy = .uncalibrated
        }
    }

    private func trackHorizontalField(_ motion: DeviceMotion) {
        let m = motion.magneticField
        let g = motion.gravity.normalized
        let horizontal = (m - g * m.dot(g)).norm * 1000
        guard horizontal.isFinite, motion.magneticFieldAccuracy != .uncalibrated else { return }
        let alpha = min(1, 1 / (2 * max(estimationRateHz, 1)))
        measuredHorizontalNanotesla =
            measuredHorizontalNanotesla.isNaN
            ? horizontal : measuredHorizontalNanotesla + alpha * (horizontal - measuredHorizontalNanotesla)
    }

    /// The CMDeviceMotion fields, after the common ones.
    static func encode(_ m: DeviceMotion, into b: inout JSONBuffer) {
        let q = m.attitude
        let r = RotationMatrix(q)
        b.raw(",\"attitude\":{\"quaternion\":{\"x\":")
        b.number(q.x, decimals: 7)
        b.raw(",\"y\":")
        b.number(q.y, decimals: 7)
        b.raw(",\"z\":")
        b.number(q.z, decimals: 7)
        b.raw(",\"w\":")
        b.number(q.w, decimals: 7)
        b.raw("},\"rotationMatrix\":{\"m11\":")
        b.number(r.m11, decimals: 7)
        b.raw(",\"m12\":")
        b.number(r.m12, decimals: 7)
        b.raw(",\"m13\":")
        b.number(r.m13, decimals: 7)
        b.raw(",\"m21\":")
        b.number(r.m21, decimals: 7)
        b.raw(",\"m22\":")
        b.number(r.m22, decimals: 7)
        b.raw(",\"m23\":")
        b.number(r.m23, decimals: 7)
        b.raw(",\"m31\":")
        b.number(r.m31, decimals: 7)
        b.raw(",\"m32\":")
        b.number(r.m32, decimals: 7)
        b.raw(",\"m33\":")
        b.number(r.m33, decimals: 7)
        b.raw("},\"roll\":")
        b.number(q.roll, decimals: 6)
        b.raw(",\"pitch\":")
        b.number(q.pitch, decimals: 6)
        b.raw(",\"yaw\":")
        b.number(q.yaw, decimals: 6)
        b.raw("},\"rotationRate\":")
        b.vector(m.rotationRate, decimals: 6)
        b.raw(",\"gravity\":")
        b.vector(m.gravity, decimals: 6)
        b.raw(",\"userAcceleration\":")
        b.vector(m.userAcceleration, decimals: 6)
        b.raw(",\"magneticField\":{\"field\":")
        b.vector(m.magneticField, decimals: 3)
        b.raw(",\"accuracy\":")
        switch m.magneticFieldAccuracy {
        case .uncalibrated: b.raw("\"uncalibrated\"")
        case .low: b.raw("\"low\"")
        case .medium: b.raw("\"medium\"")
        case .high: b.raw("\"high\"")
        }
        b.raw("},\"heading\":")
        b.number(m.heading, decimals: 3)
        b.raw(",\"referenceFrame\":")
        switch m.referenceFrame {
        case .xArbitraryZVertical: b.raw("\"xArbitraryZVertical\"")
        case .xArbitraryCorrectedZVertical: b.raw("\"xArbitraryCorrectedZVertical\"")
        case .xMagneticNorthZVertical: b.raw("\"xMagneticNorthZVertical\"")
        case .xTrueNorthZVertical: b.raw("\"xTrueNorthZVertical\"")
        }
    }
}
