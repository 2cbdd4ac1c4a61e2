import AgentConfig
import AgentPorts
import Foundation
import IIOSensors
import Logging
import MotionEstimation
import MotionModel
import Recording
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
                throw AgentError(
                    "source.kind is replay but source.replay.file is not set — name a recording (CSV) in config.yaml"
                )
            }
            let source = try ReplaySensorSource(
                path: file,
                realtime: settings.replay.speed == .realtime,
                loop: settings.replay.loop
            )
            logger.info("sensor source: \(source.summary)")
            return source
        case .iio:
            return try iio(settings.iio, logger: logger)
        case .auto:
            if IIODiscovery.hasIMU(uri: settings.iio.uri) {
                logger.info("source.kind auto: an IMU was found through libiio at \(settings.iio.uri) — using it")
                return try iio(settings.iio, logger: logger)
            }
            logger.notice(
                "source.kind auto: no IIO accelerometer or gyroscope found at \(settings.iio.uri) — using the simulated IMU"
            )
            return try simulated(settings.simulated, logger: logger)
        }
    }

    private static func simulated(_ s: SimulatedSourceSettings, logger: Logger) throws -> SensorSource {
        guard let scenario = SimulationScenario(rawValue: s.scenario) else {
            throw AgentError(
                "source.simulated.scenario '\(s.scenario)' is unknown — use one of \(SimulationScenario.allCases.map(\.rawValue).joined(separator: ", "))"
            )
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
        let source = try IIOSensorSource(
            uri: s.uri,
            deviceFilter: s.devices,
            mountMatrixOverrides: mountMatrixOverrides(s),
            logger: logger
        )
        logger.info("sensor source: \(source.summary)")
        return source
    }

    /// `source.iio.mount_matrix` as the IIO source takes it. The loader has checked every entry, so one
    /// that does not parse here was set in code, and is refused rather than silently dropped.
    static func mountMatrixOverrides(_ s: IIOSourceSettings) throws -> [MountMatrixOverride] {
        let parsed = s.mountMatrixOverrides
        guard parsed.count == s.mountMatrix.count else {
            throw AgentError(
                "source.iio.mount_matrix has an entry that is not DEVICE[:SENSOR]=x0, y0, z0; x1, y1, z1; x2, y2, z2 "
                    + "— run motion-agent check-config to see which"
            )
        }
        // The IIO source takes the first entry that matches; an entry naming the sensor is more specific than
        // one for the whole device, so it goes first and wins (config.yaml says so).
        let ordered = parsed.filter { $0.sensor != nil } + parsed.filter { $0.sensor == nil }
        return ordered.map { setting in
            let v = setting.values
            return MountMatrixOverride(
                device: setting.device,
                sensor: setting.sensor,
                matrix: MountMatrix(
                    rows: Vector3(v[0], v[1], v[2]),
                    Vector3(v[3], v[4], v[5]),
                    Vector3(v[6], v[7], v[8])
                )
            )
        }
    }
}
