import AgentConfig
import AgentPorts
import MotionEstimation
import MotionModel
import MotionWire

/// `{root}/events`: the motion events of `MotionEventDetector` — a fall (then its resolution), an impact, a free
/// fall, a tilt — each published the moment the detector reports it: never batched, never held back by the rate.
/// `rate_hz` is the rate the detector samples the accelerometer at (it was tuned at 50–200 Hz); the gyroscope is
/// used when another stream runs it, not turned on for this one.
package final class EventsStream: MotionStream, @unchecked Sendable {
    package let name = StreamName.events
    package private(set) var settings: StreamSettings
    package private(set) var effectiveRateHz: Double = 0
    package private(set) var detector: MotionEventDetector

    /// The detector's range: below 50 Hz an impact's peak is missed, above 200 Hz it only costs.
    package static let detectorRatesHz = 50.0...200.0

    private var topicID = -1
    private var seq: UInt64 = 0
    private var decimator = Decimator(rateHz: 0, hardwareRateHz: 0)
    private var running = false
    /// The wall-clock dates the pending fall's first report went out with (keyed by its sample-clock date), so
    /// its follow-up carries the same `date` — the fall's identity — even when the wall clock was stepped or
    /// re-anchored in between.
    private var reportedFall: (date: Double, wallDate: Double, wallDetectionDate: Double)?
    /// The last sample the detector saw, s on the sample clock: an operator's resolution is dated by it.
    private var lastTimestamp: Double?
    /// A fall an earlier run reported and did not resolve (wall-clock dates, as published): the detector takes it
    /// over at the first sample, when its dates can be moved onto this run's sample clock.
    private var inheritedFall: FallDetectionEvent?
    /// Where the fall awaiting a resolution is kept across restarts (written off this path); nil: not kept.
    private var pendingFallKeeper: PendingFallKeeper?

    package init(settings: StreamSettings, detectorSettings: MotionEventDetector.Settings = .defaults) {
        self.settings = settings
        detector = MotionEventDetector(settings: detectorSettings)
    }

    /// The detector's settings for the events settings of a configuration: the kinds and thresholds it names,
    /// the shipped values for the rest.
    package static func detectorSettings(_ events: MotionEventsSettings) -> MotionEventDetector.Settings {
        var settings = MotionEventDetector.Settings.defaults
        settings.fallEnabled = events.falls
        settings.fall.responseWindowSeconds = events.fallResponseSeconds
        settings.impactEnabled = events.impacts
        settings.impact.thresholdG = events.impactThresholdG
        settings.freeFallEnabled = events.freeFalls
        settings.tiltEnabled = events.tilt
        settings.tilt.coneHalfAngleDegrees = events.tiltConeDegrees
        return settings
    }

    /// New detector settings from the next sample on (`MotionEventDetector.reconfigure`); with the hub's lock held.
    package func reconfigure(detector settings: MotionEventDetector.Settings) {
        guard settings != detector.settings else { return }
        detector.reconfigure(settings)
        if !settings.fallEnabled, reportedFall != nil || inheritedFall != nil {
            // Its follow-up was switched off with the falls: nothing is watched any more, so nothing is kept.
            reportedFall = nil
            inheritedFall = nil
            pendingFallKeeper?.record(nil)
        }
    }

    /// Keeps the fall awaiting a resolution in `store` from now on and takes over `inherited`, the one an earlier
    /// run kept there (before the first sample; with the hub's lock held or before the hub runs).
    package func keepPendingFall(in keeper: PendingFallKeeper?, inherited: FallDetectionEvent?) {
        pendingFallKeeper = keeper
        inheritedFall = inherited
    }

    package func sensorDemandsHz(settings: StreamSettings) -> [SensorType: Double] {
        guard settings.enabled else { return [:] }
        let rate = min(max(settings.rateHz, Self.detectorRatesHz.lowerBound), Self.detectorRatesHz.upperBound)
        return [.accelerometer: rate]
    }

    package func configure(settings: StreamSettings, sensorRatesHz: [SensorType: Double], topicID: Int) {
        self.settings = settings
        self.topicID = topicID
        let rate = sensorRatesHz[.accelerometer] ?? 0
        running = settings.enabled && rate > 0
        let wanted = sensorDemandsHz(settings: settings)[.accelerometer] ?? 0
        effectiveRateHz = running ? min(wanted, rate) : 0
        decimator = Decimator(rateHz: effectiveRateHz, hardwareRateHz: rate)
    }

    package var consumesSamples: Bool { running }

    package func consume(_ sample: IMUSample, context: inout StreamContext) {
        guard running, sample.acceleration != nil, decimator.accept(sample.timestamp) else { return }
        lastTimestamp = sample.timestamp
        if let inherited = inheritedFall { adopt(inherited, at: sample.timestamp, clock: &context.clock) }
        for event in detector.update(sample) {
            seq += 1
            let payload = onWallClock(event, &context.clock)
            context.publish(payload, seq: seq, timestamp: sample.timestamp, topicID: topicID, settings: settings)
        }
    }

    /// An operator's resolution (`confirmed`, `dismissed`) of the fall awaiting one: the follow-up is published
    /// at once, dated by the last sample the detector saw, and returned with wall-clock dates as it went out.
    /// nil when the stream is not running or no fall awaits a resolution (none yet, or already resolved).
    package func resolveFall(
        _ resolution: FallDetectionEvent.Resolution,
        context: inout StreamContext
    ) -> FallDetectionEvent? {
        guard running, let time = lastTimestamp, let event = detector.resolveFall(resolution, at: time) else {
            return nil
        }
        seq += 1
        let payload = onWallClock(.fall(event), &context.clock)
        context.publish(payload, seq: seq, timestamp: time, topicID: topicID, settings: settings)
        guard case .motionEvent(.fall(let published)) = payload else { return event }
        return published
    }

    /// The wall-clock date (Unix s, as published) of the fall awaiting a resolution, if its report went out.
    package var pendingFallDate: Double? { reportedFall?.wallDate ?? inheritedFall?.date }

    /// Hands `fall` (wall-clock dates) to the detector with its dates on the sample clock, `t` being now on both:
    /// the time since its detection is the wall clock's, the agent being down for part of it.
    private func adopt(_ fall: FallDetectionEvent, at t: Double, clock: inout WallClock) {
        inheritedFall = nil
        guard detector.settings.fallEnabled else {
            pendingFallKeeper?.record(nil)
            return
        }
        let now = clock.wallTime(of: t)
        var onSampleClock = fall
        onSampleClock.date = t - (now - fall.date)
        onSampleClock.detectionDate = t - (now - fall.detectionDate)
        detector.adoptUnresolvedFall(onSampleClock)
        reportedFall = (onSampleClock.date, fall.date, fall.detectionDate)
    }

    /// Whether the detector is fed (the stream is on and the accelerometer runs).
    package var isRunning: Bool { running }

    /// The event with its dates moved from the sample clock to wall-clock Unix seconds, as the payload carries them.
    /// A fall's follow-up keeps the dates its first report went out with.
    func onWallClock(_ event: MotionEvent, _ clock: inout WallClock) -> StreamPayload {
        switch event {
        case .fall(var e):
            let sampleDate = e.date
            if e.resolution != nil, let reported = reportedFall, reported.date == sampleDate {
                e.date = reported.wallDate
                e.detectionDate = reported.wallDetectionDate
                reportedFall = nil
            } else {
                e.date = clock.wallTime(of: e.date)
                e.detectionDate = clock.wallTime(of: e.detectionDate)
                if e.resolution == nil { reportedFall = (sampleDate, e.date, e.detectionDate) }
            }
            e.resolutionDate = e.resolutionDate.map { clock.wallTime(of: $0) }
            pendingFallKeeper?.record(e)
            return .motionEvent(.fall(e))
        case .impact(var e):
            e.date = clock.wallTime(of: e.date)
            return .motionEvent(.impact(e))
        case .freeFall(var e):
            e.date = clock.wallTime(of: e.date)
            return .motionEvent(.freeFall(e))
        case .tilt(var e):
            e.date = clock.wallTime(of: e.date)
            return .motionEvent(.tilt(e))
        }
    }
}

extension EventsStream: CatalogStream {
    package static func make(
        _ name: StreamName,
        _ settings: StreamSettings,
        in catalog: StreamCatalog
    ) -> any MotionStream {
        EventsStream(settings: settings)
    }
}
