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
package final class PedometerStream: MotionStream, @unchecked Sendable {
    package let name = StreamName.pedometer
    package private(set) var settings: StreamSettings
    package private(set) var effectiveRateHz: Double = 0
    package private(set) var pedometer: Pedometer

    /// The step detector's working rate: the walks it was tuned on were resampled down to this without loss.
    package static let estimationRateHz = 50.0
    /// Floors need only the slow barometric trend.
    package static let barometerRateHz = 10.0
    package static let heartbeatInterval = 10.0

    private let eventsTopicID: Int
    private var topicID = -1
    private var seq: UInt64 = 0
    private var eventSeq: UInt64 = 0
    private var cap = RateCap(rateHz: 0)
    private var lastPublishedSteps = -1
    private var lastHeartbeat = -Double.infinity
    private var running = false
    private let gait: SharedGait

    /// - Parameter gait: the step detector shared with the activity stream (one per catalog).
    package init(settings: StreamSettings, userHeightM: Double, eventsTopicID: Int, gait: SharedGait = SharedGait()) {
        self.settings = settings
        self.gait = gait
        var s = Pedometer.Settings.defaults
        s.userHeight = userHeightM
        pedometer = Pedometer(settings: s)
        self.eventsTopicID = eventsTopicID
    }

    /// Starts counting from zero; the next sample publishes the reset count.
    package func reset() {
        pedometer = Pedometer(settings: pedometer.settings)
        lastPublishedSteps = -1
        lastHeartbeat = -.infinity
    }

    package func sensorDemandsHz(settings: StreamSettings) -> [SensorType: Double] {
        settings.enabled ? [.accelerometer: Self.estimationRateHz, .barometer: Self.barometerRateHz] : [:]
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
        guard running, sample.acceleration != nil || sample.pressureKPa != nil else { return }
        if let event = pedometer.update(sample, gait: gait.reading(for: sample)) {
            eventSeq += 1
            let published = PedometerEvent(date: context.clock.wallTime(of: event.date), type: event.type)
            context.publish(
                .pedometerEvent(published),
                seq: eventSeq,
                timestamp: sample.timestamp,
                topicID: eventsTopicID,
                settings: settings
            )
        }
        let steps = pedometer.numberOfSteps
        let heartbeatDue = sample.timestamp - lastHeartbeat >= Self.heartbeatInterval
        guard steps != lastPublishedSteps || heartbeatDue, cap.allow(sample.timestamp) else { return }
        lastPublishedSteps = steps
        lastHeartbeat = sample.timestamp
        seq += 1
        var data = pedometer.data
        data.startDate = context.clock.wallTime(of: data.startDate)
        data.endDate = context.clock.wallTime(of: data.endDate)
        context.publish(.pedometer(data), seq: seq, timestamp: sample.timestamp, topicID: topicID, settings: settings)
    }
}

extension PedometerStream: CatalogStream {
    package static func make(
        _ name: StreamName,
        _ settings: StreamSettings,
        in catalog: StreamCatalog
    ) -> any MotionStream {
        PedometerStream(
            settings: settings,
            userHeightM: catalog.configuration.pedometer.userHeightM,
            eventsTopicID: catalog.topicTable.id(for: catalog.topics.topic(.pedometerEvents)),
            gait: catalog.gait
        )
    }
}
