import AgentConfig
import AgentPorts
import MotionEstimation
import MotionModel
import MotionWire

/// `{root}/activity`: Core Motion's `CMMotionActivity`, published when the activity or its confidence
/// changes (at most `rate_hz` times a second; a change that comes too soon is published when the interval
/// has passed, the latest winning).
///
/// Two sources of evidence are fused: the window classifier (magnitude statistics, trained on TMD) and gait.
/// A regular step rhythm is the strongest sign of walking or running there is — the classifier sees only
/// magnitude statistics, and a phone held steadily in the hand while walking can look like a vehicle to it —
/// so while the step detector confirms a walk, the activity is walking (or running above
/// `runningCadence`) with high confidence.
public final class ActivityStream: MotionStream, @unchecked Sendable {
    public let name = StreamName.activity
    public private(set) var settings: StreamSettings
    public private(set) var effectiveRateHz: Double = 0
    public private(set) var estimator: ActivityEstimator

    /// The classifier's features (magnitude statistics over seconds) need no more than this.
    public static let estimationRateHz = 50.0

    /// Steps per second above which a confirmed gait is running: walking tops out near 2.3–2.5 steps/s,
    /// running starts around 2.5 (e.g. Minetti 2002 on the walk–run transition).
    public static let runningCadence = 2.45

    private var topicID = -1
    private var seq: UInt64 = 0
    private var cap = RateCap(rateHz: 0)
    private var pending: MotionActivity?
    private var running = false
    private var gait = StepDetector(settings: .defaults)
    private var fused = MotionActivity(startDate: 0, unknown: true, confidence: .low)
    /// When the current walk began (back-dated to its first step by the detector).
    private var walkStart = 0.0

    public init(settings: StreamSettings) {
        self.settings = settings
        estimator = ActivityEstimator()
    }

    public var requiredSensors: Set<SensorType> { [.accelerometer] }

    /// The latest activity (unknown until the first window is full).
    public var current: MotionActivity { fused }

    public func sensorDemandsHz(settings: StreamSettings) -> [SensorType: Double] {
        settings.enabled ? [.accelerometer: Self.estimationRateHz, .gyroscope: Self.estimationRateHz] : [:]
    }

    public func configure(settings: StreamSettings, sensorRatesHz: [SensorType: Double], topicID: Int) {
        self.settings = settings
        self.topicID = topicID
        running = settings.enabled && sensorRatesHz[.accelerometer] != nil
        effectiveRateHz = running ? settings.rateHz : 0
        cap = RateCap(rateHz: effectiveRateHz)
    }

    public func consume(_ sample: IMUSample, context: inout StreamContext) {
        guard running, sample.acceleration != nil || sample.rotationRate != nil else { return }
        var walking = false
        var cadence = 0.0
        if let a = sample.acceleration {
            if let start = gait.update(timestamp: sample.timestamp, acceleration: a).walkStarted { walkStart = start }
            walking = gait.isWalking && gait.stepPeriod > 0
            cadence = walking ? 1 / gait.stepPeriod : 0
        }
        _ = estimator.update(sample)
        var next = estimator.activity
        if walking {
            let run = cadence >= Self.runningCadence || next.running
            next = MotionActivity(
                startDate: next.startDate,
                walking: !run,
                running: run,
                confidence: .high
            )
        }
        if !next.hasSameFlags(as: fused) {
            if walking && !(fused.walking || fused.running) { next.startDate = walkStart }
            fused = next
            pending = fused
        } else if next.confidence != fused.confidence {
            fused.confidence = next.confidence
            pending = fused
        }
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
