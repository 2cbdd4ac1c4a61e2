import AgentConfig
import AgentPorts
import MotionModel
import MotionWire

/// The raw sensor streams: `accelerometer` (g, Core Motion's sign), `gyroscope` (rad/s, raw) and
/// `magnetometer` (µT, raw), each `{"seq", "timestamp", "time", "<field>": {"x","y","z"}}`.
package final class RawSensorStream: MotionStream, @unchecked Sendable {
    package let name: StreamName
    package let sensor: SensorType
    package private(set) var settings: StreamSettings
    package private(set) var effectiveRateHz: Double = 0

    private var decimator = Decimator(rateHz: 0, hardwareRateHz: 0)
    private var topicID = -1
    private var seq: UInt64 = 0
    private var batcher: SampleBatcher

    /// Nil for names that are not raw sensor streams.
    package init?(name: StreamName, settings: StreamSettings) {
        let descriptor = name.descriptor
        guard descriptor.isRawSensor, let sensor = descriptor.pacingSensor,
            let kind = BinaryBatchLayout.Kind(payload: descriptor.primary.payload)
        else { return nil }
        self.name = name
        self.settings = settings
        self.sensor = sensor
        batcher = SampleBatcher(kind: kind)
    }

    package func sensorDemandsHz(settings: StreamSettings) -> [SensorType: Double] {
        settings.enabled ? [sensor: settings.rateHz] : [:]
    }

    package func configure(settings: StreamSettings, sensorRatesHz: [SensorType: Double], topicID: Int) {
        let hardwareRateHz = sensorRatesHz[sensor] ?? 0
        self.settings = settings
        batcher.configure(size: settings.batch, encoding: settings.encoding, jsonBytesPerSample: 140)
        self.topicID = topicID
        effectiveRateHz = settings.enabled && hardwareRateHz > 0 ? min(settings.rateHz, hardwareRateHz) : 0
        decimator = Decimator(rateHz: effectiveRateHz, hardwareRateHz: hardwareRateHz)
    }

    package func consume(_ sample: IMUSample, context: inout StreamContext) {
        guard effectiveRateHz > 0 else { return }
        let payload: StreamPayload
        switch sensor {
        case .accelerometer:
            guard let v = sample.acceleration else { return }
            payload = .acceleration(v)
        case .gyroscope:
            guard let v = sample.rotationRate else { return }
            payload = .rotationRate(v)
        case .magnetometer:
            guard let v = sample.magneticField else { return }
            payload = .magneticField(v)
        case .barometer:
            return
        }
        guard decimator.accept(sample.timestamp) else { return }
        seq += 1
        batcher.add(
            payload,
            seq: seq,
            timestamp: sample.timestamp,
            topicID: topicID,
            settings: settings,
            context: &context
        )
    }

    package func flush(context: inout StreamContext) {
        batcher.flush(topicID: topicID, settings: settings, context: &context)
    }
}

extension RawSensorStream: CatalogStream {
    package static func make(
        _ name: StreamName,
        _ settings: StreamSettings,
        in catalog: StreamCatalog
    ) -> any MotionStream {
        // The declarations give this type to raw sensor names only.
        RawSensorStream(name: name, settings: settings)!
    }
}
