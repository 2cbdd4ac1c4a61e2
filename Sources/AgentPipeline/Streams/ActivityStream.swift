import AgentConfig
import AgentPorts
import MotionEstimation
import MotionModel
import MotionWire

/// `{root}/activity`: Core Motion's `CMMotionActivity`, published when the activity or its confidence
/// changes (at most `rate_hz` times a second; a change that comes too soon is published when the interval
/// has passed, the latest winning).
///
/// Two sources of evidence are fused (`GaitActivityFusion`): the window classifier (orientation-free features
/// of 5 s on a 25 Hz grid; trained on DSADS with people held out, automotive on TMD) and gait, read from the
/// step detector the pedometer shares (`SharedGait`).
package final class ActivityStream: MotionStream, @unchecked Sendable {
    package let name = StreamName.activity
    package private(set) var settings: StreamSettings
    package private(set) var effectiveRateHz: Double = 0
    package private(set) var estimator: ActivityEstimator

    /// The classifier reads a 25 Hz grid (`ActivityResampler`); the step detector it shares with the pedometer
    /// runs at 50 Hz.
    package static let estimationRateHz = 50.0

    /// Steps per second from which a confirmed gait is running (`GaitActivityFusion.runningCadence`).
    package static let runningCadence = GaitActivityFusion.runningCadence

    private var topicID = -1
    private var seq: UInt64 = 0
    private var cap = RateCap(rateHz: 0)
    private var pending: MotionActivity?
    private var running = false
    private let gait: SharedGait
    private var fusion = GaitActivityFusion()

    /// - Parameter gait: the step detector shared with the pedometer stream (one per catalog).
    package init(settings: StreamSettings, gait: SharedGait = SharedGait()) {
        self.settings = settings
        self.gait = gait
        estimator = ActivityEstimator()
    }

    /// The latest activity (unknown until the first window is full).
    package var current: MotionActivity { fusion.activity }

    package func sensorDemandsHz(settings: StreamSettings) -> [SensorType: Double] {
        settings.enabled ? [.accelerometer: Self.estimationRateHz, .gyroscope: Self.estimationRateHz] : [:]
    }

    package func configure(settings: StreamSettings, sensorRatesHz: [SensorType: Double], topicID: Int) {
        self.settings = settings
        self.topicID = topicID
        running = settings.enabled && sensorRatesHz[.accelerometer] != nil
        effectiveRateHz = running ? settings.rateHz : 0
        cap = RateCap(rateHz: effectiveRateHz)
    }

    package var consumesSamples: Bool { running }

    package func consume(_ sample: IMUSample, context: inout StreamContext) {
        guard running, sample.acceleration != nil || sample.rotationRate != nil else { return }
        let reading = gait.reading(for: sample)
        _ = estimator.update(sample)
        if let changed = fusion.update(classifier: estimator.activity, gait: reading) { pending = changed }
        guard let activity = pending, cap.allow(sample.timestamp) else { return }
        pending = nil
        seq += 1
        var published = activity
        published.startDate = context.clock.wallTime(of: activity.startDate)
        context.publish(
            .activity(published),
            seq: seq,
            timestamp: sample.timestamp,
            topicID: topicID,
            settings: settings
        )
    }
}

extension ActivityStream: CatalogStream {
    package static func make(
        _ name: StreamName,
        _ settings: StreamSettings,
        in catalog: StreamCatalog
    ) -> any MotionStream {
        ActivityStream(settings: settings, gait: catalog.gait)
    }
}
