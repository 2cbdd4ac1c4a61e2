import AgentConfig
import AgentCore
import Foundation
import IIOSensors
import Logging
import MotionEstimation
import Simulation

/// Chooses the sensor source from `source.kind`: IIO hardware, the simulator, or a replayed recording.
enum SourceFactory {
    static func make(configuration: AgentConfiguration, logger: Logger) throws -> SensorSource {
        let settings = configuration.source
        switch settings.kind {
        case .simulated:
            return try simulated(settings.simulated, logger: logger)
        case .replay:
            guard let file = settings.replay.file else {
                throw AgentError("source.kind is replay but source.replay.file is not set — name a recording (CSV) in config.yaml")
            }
            let source = try ReplaySensorSource(path: file, realtime: settings.replay.speed == .realtime, loop: settings.replay.loop)
            logger.info("sensor source: \(source.summary)")
            return source
        case .iio:
            return try iio(settings.iio, logger: logger)
        case .auto:
            if IIODiscovery.hasIMU(uri: settings.iio.uri) {
                logger.info("source.kind auto: an IMU was found through libiio at \(settings.iio.uri) — using it")
                return try iio(settings.iio, logger: logger)
            }
            logger.notice("source.kind auto: no IIO accelerometer or gyroscope found at \(settings.iio.uri) — using the simulated IMU")
            return try simulated(settings.simulated, logger: logger)
        }
    }

    private static func simulated(_ s: SimulatedSourceSettings, logger: Logger) throws -> SensorSource {
        guard let scenario = SimulationScenario(rawValue: s.scenario) else {
            throw AgentError("source.simulated.scenario '\(s.scenario)' is unknown — use one of \(SimulationScenario.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        // The simulated magnetometer senses the World Magnetic Model's field at the configured place and today.
        let field = try WorldMagneticModel.wmm2025.field(
            latitude: s.latitude,
            longitude: s.longitude,
            altitudeKm: s.altitudeM / 1000,
            decimalYear: WorldMagneticModel.decimalYear(from: Date())
        )
        let source = try SimulatedSensorSource(
            scenario: scenario,
            seed: s.seed,
            rateHz: s.rateHz,
            earthField: field.northWestUpMicrotesla,
            altitudeM: s.altitudeM,
            logger: logger
        )
        logger.info("sensor source: \(source.summary)")
        return source
    }

    private static func iio(_ s: IIOSourceSettings, logger: Logger) throws -> SensorSource {
        let source = try IIOSensorSource(uri: s.uri, logger: logger)
        logger.info("sensor source: \(source.summary)")
        return source
    }
}
