import AgentConfig
import AgentPorts
import MotionEstimation
import MotionModel
import MotionWire

/// `{root}/altimeter` (Core Motion's `CMAltitudeData`: relative altitude since start, pressure) and
/// `{root}/altimeter/absolute` (`CMAbsoluteAltitudeData`: altitude above sea level from the standard
/// atmosphere and the configured sea-level pressure, with accuracy and precision), both at `rate_hz`.
package final class AltimeterStream: MotionStream, @unchecked Sendable {
    package let name = StreamName.altimeter
    package private(set) var settings: StreamSettings
    package private(set) var effectiveRateHz: Double = 0
    package private(set) var altimeter: Altimeter

    /// The altimeter smooths pressure over about a second; this is plenty.
    package static let estimationRateHz = 25.0

    private let absoluteTopicID: Int
    private var topicID = -1
    private var seq: UInt64 = 0
    private var absoluteSeq: UInt64 = 0
    private var decimator = Decimator(rateHz: 0, hardwareRateHz: 0)
    private var running = false

    package init(settings: StreamSettings, seaLevelPressureKPa: Double, absoluteTopicID: Int) {
        self.settings = settings
        var s = Altimeter.Settings.defaults
        s.seaLevelPressureKPa = seaLevelPressureKPa
        altimeter = Altimeter(settings: s)
        self.absoluteTopicID = absoluteTopicID
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
        guard running, sample.pressureKPa != nil else { return }
        guard let relative = altimeter.update(sample), decimator.accept(sample.timestamp) else { return }
        seq += 1
        context.publish(
            .altitude(relative),
            seq: seq,
            timestamp: sample.timestamp,
            topicID: topicID,
            settings: settings
        )

        guard let absolute = altimeter.absoluteAltitude else { return }
        absoluteSeq += 1
        context.publish(
            .absoluteAltitude(absolute),
            seq: absoluteSeq,
            timestamp: sample.timestamp,
            topicID: absoluteTopicID,
            settings: settings
        )
    }
}

extension AltimeterStream: CatalogStream {
    package static func make(
        _ name: StreamName,
        _ settings: StreamSettings,
        in catalog: StreamCatalog
    ) -> any MotionStream {
        AltimeterStream(
            settings: settings,
            seaLevelPressureKPa: catalog.configuration.altimeter.seaLevelPressureKPa,
            absoluteTopicID: catalog.topicTable.id(for: catalog.topics.topic(.absoluteAltitude))
        )
    }
}
