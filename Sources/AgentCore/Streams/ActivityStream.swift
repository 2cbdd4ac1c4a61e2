import AgentConfig
import MotionEstimation
import MotionModel

/// `{root}/activity`: Core Motion's `CMMotionActivity`, published when the activity or its confidence
/// changes (at most `rate_hz` times a second; a change that comes too soon is published when the interval
/// has passed, the latest winning).
public final class ActivityStream: MotionStream, @unchecked Sendable {
    public let name = StreamName.activity
    public private(set) var settings: StreamSettings
    public private(set) var effectiveRateHz: Double = 0
    public private(set) var estimator: ActivityEstimator

    /// The classifier's features (magnitude statistics over seconds) need no more than this.
    public static let estimationRateHz = 50.0

    private var topicID = -1
    private var seq: UInt64 = 0
    private var cap = RateCap(rateHz: 0)
    private var pending: MotionActivity?
    private var running = false

    public init(settings: StreamSettings) {
        self.settings = settings
        estimator = ActivityEstimator()
    }

    public var requiredSensors: Set<SensorType> { [.accelerometer] }

    /// The latest classification (unknown until the first window is full).
    public var current: MotionActivity { estimator.activity }

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
        if let changed = estimator.update(sample) { pending = changed }
        guard let activity = pending, cap.allow(sample.timestamp) else { return }
        pending = nil
        seq += 1
        context.beginMessage(seq: seq, timestamp: sample.timestamp)
        let b = UInt8(ascii: ",")
        context.buffer.raw(",\"startDate\":")
        context.buffer.number(context.clock.wallTime(of: activity.startDate), decimals: 3)
        context.buffer.raw(",\"stationary\":")
        context.buffer.bool(activity.stationary)
        context.buffer.raw(",\"walking\":")
        context.buffer.bool(activity.walking)
        context.buffer.raw(",\"running\":")
        context.buffer.bool(activity.running)
        context.buffer.raw(",\"cycling\":")
        context.buffer.bool(activity.cycling)
        context.buffer.raw(",\"automotive\":")
        context.buffer.bool(activity.automotive)
        context.buffer.raw(",\"unknown\":")
        context.buffer.bool(activity.unknown)
        context.buffer.byte(b)
        context.buffer.raw("\"confidence\":")
        switch activity.confidence {
        case .low: context.buffer.raw("\"low\"")
        case .medium: context.buffer.raw("\"medium\"")
        case .high: context.buffer.raw("\"high\"")
        }
        context.buffer.byte(UInt8(ascii: "}"))
        context.publishBuffer(topicID: topicID, settings: settings)
    }
}
