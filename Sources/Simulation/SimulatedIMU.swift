import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A simulated IMU board (accelerometer, gyroscope, magnetometer, barometer) carried through a scenario,
/// with the ground truth of every instant.
///
/// Time-continuous: ask for a sample at any time `t` (s, not decreasing); the motion is evaluated exactly
/// at `t`, and the noise and drift processes advance by the time since the previous call, so changing the
/// sampling rate mid-run keeps the physics continuous and the noise right for the new rate. Deterministic:
/// the same scenario, options, seed and sequence of times give the same samples. No allocation per
/// sample.
package struct SimulatedIMU: Sendable {
    /// Earth's field at lat 48.2° N, lon 16.37° E (Vienna), NWU, µT: north 21.4, east 1.6, down 44.0.
    package static let defaultEarthField = Vector3(21.4, -1.6, -44.0)

    package let scenario: SimulationScenario
    package let seed: UInt64
    /// Earth field, world axes (NWU), µT.
    package let earthField: Vector3
    /// Ground altitude at the start, m above sea level.
    package let altitudeM: Double
    /// Sea-level pressure for the ISA altitude formula, kPa.
    package let seaLevelPressureKPa: Double
    package let errors: SensorErrorModel
    package let options: SimulationOptions

    /// The truth at the last sampled time.
    package private(set) var truth: SimulationTruth

    private let script: MotionScript
    /// World (true north) → magnetic-north NWU: a turn about up by minus the field's declination.
    private let toMagneticNorth: Quaternion
    private var cursor = 0
    private let nominalInterval: Double
    private var lastTime: Double?
    private var lastAccelerometer: Double?
    private var lastGyroscope: Double?
    private var lastMagnetometer: Double?
    private var lastBarometer: Double?

    private var accelerometerNoise: RandomSource
    private var gyroscopeNoise: RandomSource
    private var magnetometerNoise: RandomSource
    private var barometerNoise: RandomSource
    private var driftNoise: RandomSource

    private let accelerometerBias: Vector3
    private var gyroscopeBias: Vector3
    private let hardIron: Vector3
    private var pressureOffset: Double
    private var pressureDriftRate: Double

    /// - Parameters:
    ///   - earthField: the Earth's field in world axes (NWU), µT — the agent passes its world magnetic
    ///     model's value for the configured place.
    ///   - altitudeM: ground altitude at the start, m.
    ///   - nominalRateHz: the rate assumed for the noise of the very first sample (later samples use the
    ///     actual interval).
    package init(
        scenario: SimulationScenario,
        seed: UInt64 = 1,
        earthField: Vector3 = SimulatedIMU.defaultEarthField,
        altitudeM: Double = 200,
        seaLevelPressureKPa: Double = 101.325,
        errors: SensorErrorModel = .consumerMEMS,
        options: SimulationOptions = SimulationOptions(),
        nominalRateHz: Double = 100
    ) {
        self.scenario = scenario
        self.seed = seed
        self.earthField = earthField
        self.altitudeM = altitudeM
        self.seaLevelPressureKPa = seaLevelPressureKPa
        self.errors = errors
        self.options = options
        nominalInterval = 1 / min(max(nominalRateHz, 1), SimulatedIMU.maximumRateHz)
        script = MotionScript(scenario: scenario, options: options, seed: seed)
        // Declination as a turn about up: the horizontal field points atan2(west, north) counter-clockwise
        // from true north.
        let fieldHeading = earthField.x == 0 && earthField.y == 0 ? 0 : atan2(earthField.y, earthField.x)
        toMagneticNorth = Quaternion(axis: Vector3(0, 0, 1), angle: -fieldHeading)

        var setup = RandomSource(seed: seed, stream: 0xB1A5)
        accelerometerBias = setup.gaussianVector() * errors.accelerometerBiasSigma
        gyroscopeBias = setup.gaussianVector() * errors.gyroscopeBiasSigma
        let drawnHardIron = setup.gaussianVector() * errors.hardIronSigma
        hardIron = errors.hardIron ?? drawnHardIron
        pressureOffset = setup.gaussian() * errors.barometerOffsetSigma
        pressureDriftRate = setup.gaussian() * errors.barometerDriftRateSigma

        accelerometerNoise = RandomSource(seed: seed, stream: 1)
        gyroscopeNoise = RandomSource(seed: seed, stream: 2)
        magnetometerNoise = RandomSource(seed: seed, stream: 3)
        barometerNoise = RandomSource(seed: seed, stream: 4)
        driftNoise = RandomSource(seed: seed, stream: 5)
        truth = SimulationTruth()
        truth.earthField = earthField
        let motion = script.evaluate(at: 0, cursor: &cursor)
        updateTruth(time: 0, motion: motion)
    }

    /// The fastest rate the noise model accepts, Hz; closer samples are treated as this far apart.
    package static let maximumRateHz = 8000.0

    /// The readings at time `t` (s) of the requested sensors; the others are `nil`. The sample's timestamp
    /// is `t`. Afterwards `truth` describes the same instant.
    package mutating func sample(at t: Double, sensors: Set<SensorType>) -> IMUSample {
        let dt = lastTime.map { max(0, t - $0) } ?? 0
        lastTime = max(t, lastTime ?? t)
        advanceDrift(by: dt)

        let motion = script.evaluate(at: t, cursor: &cursor)
        updateTruth(time: t, motion: motion)

        var sample = IMUSample(timestamp: t)
        if sensors.contains(.accelerometer) {
            let sigma = errors.accelerometerNoiseDensity * bandwidthRoot(since: &lastAccelerometer, now: t)
            sample.acceleration =
                truth.gravity + truth.userAcceleration + accelerometerBias
                + accelerometerNoise.gaussianVector() * sigma
        }
        if sensors.contains(.gyroscope) {
            let sigma = errors.gyroscopeNoiseDensity * bandwidthRoot(since: &lastGyroscope, now: t)
            sample.rotationRate = truth.rotationRate + gyroscopeBias + gyroscopeNoise.gaussianVector() * sigma
        }
        if sensors.contains(.magnetometer) {
            lastMagnetometer = t
            var field = truth.attitude.inverseRotate(earthField)
            if let (r0, r1, r2) = errors.softIron {
                field = Vector3(r0.dot(field), r1.dot(field), r2.dot(field))
            }
            sample.magneticField = field + hardIron + magnetometerNoise.gaussianVector() * errors.magnetometerNoise
        }
        if sensors.contains(.barometer) {
            lastBarometer = t
            sample.pressureKPa = truth.pressureKPa + pressureOffset + barometerNoise.gaussian() * errors.barometerNoise
            sample.temperatureC = errors.temperatureC + barometerNoise.gaussian() * errors.temperatureNoise
        }
        return sample
    }

    /// √(bandwidth) for white noise given as a density: the anti-aliasing bandwidth is half the rate at
    /// which this sensor is being read.
    @inline(__always)
    private func bandwidthRoot(since last: inout Double?, now t: Double) -> Double {
        let interval = last.map { t - $0 } ?? nominalInterval
        last = t
        let clamped = min(max(interval, 1 / SimulatedIMU.maximumRateHz), 1)
        return (0.5 / clamped).squareRoot()
    }

    /// Random walks of the gyroscope bias and the barometer drift, exact for any step (a Wiener process
    /// sampled at interval `dt` has increments of variance σ² dt).
    private mutating func advanceDrift(by dt: Double) {
        guard dt > 0 else { return }
        let root = dt.squareRoot()
        gyroscopeBias += driftNoise.gaussianVector() * (errors.gyroscopeBiasRandomWalk * root)
        pressureOffset += pressureDriftRate * dt
        pressureDriftRate += driftNoise.gaussian() * (errors.barometerDriftRateRandomWalk * root)
    }

    private mutating func updateTruth(time: Double, motion: WorldMotion) {
        let frame = motion.frame
        let q = frame.attitude
        let altitude = altitudeM + frame.altitude
        truth.time = time
        truth.scenario = motion.scenario
        truth.isTransition = motion.isTransition
        truth.activity = motion.activity
        truth.attitude = q
        truth.magneticAttitude = (toMagneticNorth * q).normalized
        truth.rotationRate = q.inverseRotate(frame.angularVelocity)
        truth.acceleration = frame.acceleration
        truth.velocity = frame.velocity
        truth.gravity = q.inverseRotate(Vector3(0, 0, -1))
        truth.userAcceleration = q.inverseRotate(frame.acceleration) * (-1 / standardGravity)
        truth.altitude = altitude
        truth.pressureKPa = SimulatedIMU.isaPressure(altitude: altitude, seaLevel: seaLevelPressureKPa)
        truth.steps = motion.steps
        truth.distance = motion.distance
        truth.cadence = motion.cadence
        truth.speed = motion.speed
        truth.floorsAscended = motion.floorsAscended
        truth.floorsDescended = motion.floorsDescended
        truth.gyroscopeBias = gyroscopeBias
        truth.accelerometerBias = accelerometerBias
        truth.hardIron = hardIron
        truth.pressureOffsetKPa = pressureOffset
        truth.temperatureC = errors.temperatureC
    }

    /// ISA troposphere pressure, kPa, at `altitude` m: p = p₀ (1 − 2.25577 × 10⁻⁵ h)^5.25588
    /// (ICAO standard atmosphere, valid below 11 km).
    package static func isaPressure(altitude: Double, seaLevel: Double = 101.325) -> Double {
        seaLevel * pow(1 - 2.25577e-5 * altitude, 5.25588)
    }
}
