import AgentConfig
import AgentPorts
import MotionEstimation
import MotionModel
import MotionWire

/// `{root}/submersion`: depth, state (notSubmerged … pastMaxDepth), pressure, surface pressure and water
/// temperature, at `rate_hz` and at once on every state change (a diver must not learn late that they
/// passed the maximum depth).
package final class SubmersionStream: MotionStream, @unchecked Sendable {
    package let name = StreamName.submersion
    package private(set) var settings: StreamSettings
    package private(set) var effectiveRateHz: Double = 0
    package private(set) var estimator: SubmersionEstimator

    package static let estimationRateHz = 10.0

    private var topicID = -1
    private var seq: UInt64 = 0
    private var decimator = Decimator(rateHz: 0, hardwareRateHz: 0)
    private var running = false

    package init(settings: StreamSettings, waterDensity: Double, maximumDepthM: Double) {
        self.settings = settings
        var s = SubmersionEstimator.Settings.defaults
        s.waterDensity = waterDensity
        s.maximumDepth = maximumDepthM
        estimator = SubmersionEstimator(settings: s)
    }

    package func sensorDemandsHz(settings: StreamSettings) -> [SensorType: Double] {
        settings.enabled ? [.barometer: max(settings.rateHz, Self.estimationRateHz)] : [:]
    }

    package func configure(settings: StreamSettings, sensorRatesHz: [SensorType: Double], topicID: Int) {
        self.settings = settings
        self.topicID = topicID
        let rate = sensorRatesHz[.barometer] ?? 0
        running = settings.enabled && rate > 0
        effectiveRateHz = running ? min(settings.rateHz, rate) : 0
        decimator = Decimator(rateHz: effectiveRateHz, hardwareRateHz: rate)
    }

    package var consumesSamples: Bool { running }

    package func consume(_ sample: IMUSample, context: inout StreamContext) {
        guard running, sample.pressureKPa != nil, let (m, event) = estimator.update(sample) else { return }
        // Both conditions are evaluated so the decimator's schedule advances even on state-change messages.
        let due = decimator.accept(sample.timestamp)
        guard due || event != nil else { return }
        seq += 1
        context.publish(.submersion(m), seq: seq, timestamp: sample.timestamp, topicID: topicID, settings: settings)
    }
}

extension SubmersionStream: CatalogStream {
    package static func make(
        _ name: StreamName,
        _ settings: StreamSettings,
        in catalog: StreamCatalog
    ) -> any MotionStream {
        SubmersionStream(
            settings: settings,
            waterDensity: catalog.configuration.submersion.water.densityKgPerM3,
            maximumDepthM: catalog.configuration.submersion.maxDepthM
        )
    }
}
