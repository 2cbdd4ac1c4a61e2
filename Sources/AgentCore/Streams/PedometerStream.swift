import AgentConfig
import AgentPorts
import MotionEstimation
import MotionModel
import MotionWire

/// `{root}/pedometer` (Core Motion's `CMPedometerData`) and `{root}/pedometer/events` (`CMPedometerEvent`).
///
/// Data is published when the step count changes — at most `rate_hz` times a second — and every
/// `heartbeatInterval` seconds regardless, so a subscriber sees cadence and pace settle to nil when the
/// walk stops. Pause and resume events go out as they happen.
public final class PedometerStream: MotionStream, @unchecked Sendable {
    public let name = StreamName.pedometer
    public private(set) var settings: StreamSettings
    public private(set) var effectiveRateHz: Double = 0
    public private(set) var pedometer: Pedometer

    /// The step detector's working rate: the walks it was tuned on were resampled down to this without loss.
    public static let estimationRateHz = 50.0
    /// Floors need only the slow barometric trend.
    public static let barometerRateHz = 10.0
    public static let heartbeatInterval = 10.0

    private let eventsTopicID: Int
    private var topicID = -1
    private var seq: UInt64 = 0
    private var eventSeq: UInt64 = 0
    private var cap = RateCap(rateHz: 0)
    private var lastPublishedSteps = -1
    private var lastHeartbeat = -Double.infinity
    private var running = false

    public init(settings: StreamSettings, userHeightM: Double, eventsTopicID: Int) {
        self.settings = settings
        var s = Pedometer.Settings.defaults
        s.userHeight = userHeightM
        pedometer = Pedometer(settings: s)
        self.eventsTopicID = eventsTopicID
    }

    public var requiredSensors: Set<SensorType> { [.accelerometer] }

    /// Starts counting from zero; the next sample publishes the reset count.
    public func reset() {
        pedometer = Pedometer(settings: pedometer.settings)
        lastPublishedSteps = -1
        lastHeartbeat = -.infinity
    }

    public func sensorDemandsHz(settings: StreamSettings) -> [SensorType: Double] {
        settings.enabled ? [.accelerometer: Self.estimationRateHz, .barometer: Self.barometerRateHz] : [:]
    }

    public func configure(settings: StreamSettings, sensorRatesHz: [SensorType: Double], topicID: Int) {
        self.settings = settings
        self.topicID = topicID
        running = settings.enabled && sensorRatesHz[.accelerometer] != nil
        effectiveRateHz = running ? settings.rateHz : 0
        cap = RateCap(rateHz: effectiveRateHz)
    }

    public func consume(_ sample: IMUSample, context: inout StreamContext) {
        guard running, sample.acceleration != nil || sample.pressureKPa != nil else { return }
        if let event = pedometer.update(sample) {
            eventSeq += 1
            context.beginMessage(seq: eventSeq, timestamp: sample.timestamp)
            context.buffer.raw(",\"type\":")
            context.buffer.raw(event.type == .pause ? "\"pause\"" : "\"resume\"")
            context.buffer.raw(",\"date\":")
            context.buffer.number(context.clock.wallTime(of: event.date), decimals: 3)
            context.buffer.byte(UInt8(ascii: "}"))
            context.publishBuffer(topicID: eventsTopicID, settings: settings)
        }
        let steps = pedometer.numberOfSteps
        let heartbeatDue = sample.timestamp - lastHeartbeat >= Self.heartbeatInterval
        guard steps != lastPublishedSteps || heartbeatDue, cap.allow(sample.timestamp) else { return }
        lastPublishedSteps = steps
        lastHeartbeat = sample.timestamp
        seq += 1
        context.beginMessage(seq: seq, timestamp: sample.timestamp)
        let data = pedometer.data
        context.buffer.raw(",\"startDate\":")
        context.buffer.number(context.clock.wallTime(of: data.startDate), decimals: 3)
        context.buffer.raw(",\"endDate\":")
        context.buffer.number(context.clock.wallTime(of: data.endDate), decimals: 3)
        context.buffer.raw(",\"numberOfSteps\":")
        context.buffer.integer(data.numberOfSteps)
        context.buffer.raw(",\"distance\":")
        optional(data.distance, decimals: 2, &context.buffer)
        context.buffer.raw(",\"floorsAscended\":")
        optionalInteger(data.floorsAscended, &context.buffer)
        context.buffer.raw(",\"floorsDescended\":")
        optionalInteger(data.floorsDescended, &context.buffer)
        context.buffer.raw(",\"currentPace\":")
        optional(data.currentPace, decimals: 4, &context.buffer)
        context.buffer.raw(",\"currentCadence\":")
        optional(data.currentCadence, decimals: 4, &context.buffer)
        context.buffer.raw(",\"averageActivePace\":")
        optional(data.averageActivePace, decimals: 4, &context.buffer)
        context.buffer.byte(UInt8(ascii: "}"))
        context.publishBuffer(topicID: topicID, settings: settings)
    }
}

func optional(_ v: Double?, decimals: Int, _ b: inout JSONBuffer) {
    if let v { b.number(v, decimals: decimals) } else { b.raw("null") }
}

func optionalInteger(_ v: Int?, _ b: inout JSONBuffer) {
    if let v { b.integer(v) } else { b.raw("null") }
}
