import AgentPorts
import MotionModel
import MotionWire

/// `{root}/temperature`: the latest temperature the sensors reported (the IMU's die beside the accelerometer,
/// the barometer's when it runs), at `rate_hz`, paced by the accelerometer. Nothing goes out until a sample has
/// carried a temperature: a device whose drivers report none publishes nothing.
package final class TemperatureStream: MotionStream, @unchecked Sendable {
    package let name = StreamName.temperature
    package private(set) var settings: StreamSettings
    package private(set) var effectiveRateHz: Double = 0

    private var topicID = -1
    private var seq: UInt64 = 0
    private var decimator = Decimator(rateHz: 0, hardwareRateHz: 0)
    private var running = false
    private var latest: Double?

    package init(settings: StreamSettings) {
        self.settings = settings
    }

    package func sensorDemandsHz(settings: StreamSettings) -> [SensorType: Double] {
        settings.enabled ? [.accelerometer: settings.rateHz] : [:]
    }

    package func configure(settings: StreamSettings, sensorRatesHz: [SensorType: Double], topicID: Int) {
        self.settings = settings
        self.topicID = topicID
        let rate = sensorRatesHz[.accelerometer] ?? 0
        running = settings.enabled && rate > 0
        effectiveRateHz = running ? min(settings.rateHz, rate) : 0
        decimator = Decimator(rateHz: effectiveRateHz, hardwareRateHz: rate)
    }

    package var consumesSamples: Bool { running }

    package func consume(_ sample: IMUSample, context: inout StreamContext) {
        guard running else { return }
        if let t = sample.temperatureC, t.isFinite { latest = t }
        guard sample.acceleration != nil, decimator.accept(sample.timestamp), let latest else { return }
        seq += 1
        context.publish(
            .temperature(TemperatureData(timestamp: sample.timestamp, temperatureC: latest)),
            seq: seq,
            timestamp: sample.timestamp,
            topicID: topicID,
            settings: settings
        )
    }
}

extension TemperatureStream: CatalogStream {
    package static func make(
        _ name: StreamName,
        _ settings: StreamSettings,
        in catalog: StreamCatalog
    ) -> any MotionStream {
        TemperatureStream(settings: settings)
    }
}
