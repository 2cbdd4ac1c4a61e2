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
package final class DeviceMotionStream: MotionStream, @unchecked Sendable {
    package let name = StreamName.deviceMotion
    package private(set) var settings: StreamSettings
    package private(set) var effectiveRateHz: Double = 0
    package private(set) var estimator: DeviceMotionEstimator

    /// Core Motion fuses at 100 Hz or more whatever interval an app asks for; so do we.
    package static let minimumEstimationRateHz = 100.0

    private var decimator = Decimator(rateHz: 0, hardwareRateHz: 0)
    private var batcher = SampleBatcher(kind: .deviceMotion)
    private var topicID = -1
    private var seq: UInt64 = 0
    private var estimationRateHz = 0.0
    /// Offline processing publishes one message per gyroscope sample, undecimated.
    package var publishesEverySample = false
    /// Downgrades or refuses the heading where the horizontal field is too weak for a compass.
    package var headingLimiter = HeadingLimiter()
    /// From the World Magnetic Model at the configured location; nil: judged from the measured field.
    package var expectedHeadingUsability: WorldMagneticModel.HeadingUsability? {
        get { headingLimiter.expected }
        set { headingLimiter.expected = newValue }
    }
    /// The horizontal component of the calibrated field, nT, smoothed over about two seconds.
    package var measuredHorizontalNanotesla: Double { headingLimiter.measuredHorizontalNanotesla }
    /// While set, every message also carries `relativeAttitude` (reference⁻¹ ⊗ attitude).
    package var referenceAttitude: ReferenceAttitude?
    /// The estimator's latest attitude in the current frame (published or not), for capturing a reference;
    /// nil until the stream runs, and again when it stops or its frame changes (it would be stale or in
    /// another frame).
    package private(set) var latestAttitude: Quaternion?

    package init(settings: StreamSettings, referenceFrame: AttitudeReferenceFrame, declinationDegrees: Double) {
        self.settings = settings
        estimator = DeviceMotionEstimator(
            referenceFrame: referenceFrame,
            sampleInterval: 1 / Self.minimumEstimationRateHz,
            declinationDegrees: declinationDegrees
        )
    }

    package var requiredSensors: Set<SensorType> {
        name.descriptor.requiredSensors.union(estimator.referenceFrame.needsMagnetometer ? [.magnetometer] : [])
    }

    package var referenceFrame: AttitudeReferenceFrame {
        get { estimator.referenceFrame }
        set {
            if newValue != estimator.referenceFrame { latestAttitude = nil }
            estimator.referenceFrame = newValue
        }
    }

    package var declinationDegrees: Double {
        get { estimator.declinationDegrees }
        set { estimator.declinationDegrees = newValue }
    }

    /// Gyroscope bias and magnetometer calibration, to persist across restarts.
    package var persistentState: DeviceMotionEstimatorState { estimator.persistentState }

    package func restore(_ state: DeviceMotionEstimatorState) {
        estimator.restore(state)
    }

    package func sensorDemandsHz(settings: StreamSettings) -> [SensorType: Double] {
        guard settings.enabled else { return [:] }
        let rate = max(settings.rateHz, Self.minimumEstimationRateHz)
        var demands: [SensorType: Double] = [.gyroscope: rate, .accelerometer: rate]
        // The magnetometer only when the frame uses it: an arbitrary-yaw frame does not need it powered.
        if estimator.referenceFrame.needsMagnetometer { demands[.magnetometer] = min(rate, 100) }
        return demands
    }

    package func configure(settings: StreamSettings, sensorRatesHz: [SensorType: Double], topicID: Int) {
        self.settings = settings
        self.topicID = topicID
        batcher.configure(size: settings.batch, encoding: settings.encoding, jsonBytesPerSample: 1400)
        let gyroRate = sensorRatesHz[.gyroscope] ?? 0
        let haveAccel = sensorRatesHz[.accelerometer] != nil
        let haveMag = !estimator.referenceFrame.needsMagnetometer || sensorRatesHz[.magnetometer] != nil
        let running = settings.enabled && gyroRate > 0 && haveAccel && haveMag
        effectiveRateHz = running ? min(settings.rateHz, gyroRate) : 0
        if !running { latestAttitude = nil }
        decimator = Decimator(rateHz: effectiveRateHz, hardwareRateHz: gyroRate)
        estimationRateHz = gyroRate
    }

    package func consume(_ sample: IMUSample, context: inout StreamContext) {
        guard effectiveRateHz > 0 else { return }
        // Every sample feeds the estimator; only due ones are published.
        guard var motion = estimator.update(sample) else { return }
        latestAttitude = motion.attitude
        let due = publishesEverySample || decimator.accept(motion.timestamp)
        let north = motion.referenceFrame.isNorthReferenced
        if north { headingLimiter.observe(motion, rateHz: estimationRateHz) }
        guard due else { return }
        if north { headingLimiter.limit(&motion) }
        if let referenceAttitude { motion.relativeAttitude = referenceAttitude.relative(motion.attitude) }
        seq += 1
        batcher.add(
            .deviceMotion(motion),
            seq: seq,
            timestamp: motion.timestamp,
            topicID: topicID,
            settings: settings,
            context: &context
        )
    }

    package func flush(context: inout StreamContext) {
        batcher.flush(topicID: topicID, settings: settings, context: &context)
    }
}

extension DeviceMotionStream: CatalogStream {
    package static func make(
        _ name: StreamName,
        _ settings: StreamSettings,
        in catalog: StreamCatalog
    ) -> any MotionStream {
        let stream = DeviceMotionStream(
            settings: settings,
            referenceFrame: catalog.configuration.deviceMotion.referenceFrame,
            declinationDegrees: catalog.declinationDegrees ?? 0
        )
        stream.expectedHeadingUsability = catalog.headingUsability
        return stream
    }
}
