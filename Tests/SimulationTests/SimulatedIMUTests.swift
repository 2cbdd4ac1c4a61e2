import MotionModel
import Testing

@testable import Simulation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Mean and standard deviation per axis of a run of vectors.
private struct VectorStatistics {
    private(set) var count = 0
    private var sum = Vector3.zero
    private var sumSquares = Vector3.zero

    mutating func add(_ v: Vector3) {
        count += 1
        sum += v
        sumSquares += Vector3(v.x * v.x, v.y * v.y, v.z * v.z)
    }

    var mean: Vector3 { sum / Double(count) }
    var standardDeviation: Vector3 {
        let m = mean
        let n = Double(count)
        return Vector3(
            (sumSquares.x / n - m.x * m.x).squareRoot(),
            (sumSquares.y / n - m.y * m.y).squareRoot(),
            (sumSquares.z / n - m.z * m.z).squareRoot()
        )
    }
}

private let allSensors = Set(SensorType.allCases)

@Suite struct SimulatedIMUTests {
    @Test func faceUpAtRestReadsMinusOneG() {
        let errors = SensorErrorModel.consumerMEMS
        let rate = 100.0
        var run = SimulatedRecording(imu: SimulatedIMU(scenario: .stationary, seed: 11), rateHz: rate, duration: 20)
        var stats = VectorStatistics()
        // Per-sample σ from the datasheet density and the anti-aliasing bandwidth rate/2.
        let sigma = errors.accelerometerNoiseDensity * (rate / 2).squareRoot()
        var bias = Vector3.zero
        while let (sample, truth) = run.next() {
            let a = sample.acceleration!
            bias = truth.accelerometerBias
            stats.add(a - bias)
            #expect(abs(a.norm - 1) < bias.norm + 6 * sigma)
            #expect(truth.gravity == Vector3(0, 0, -1) || (truth.gravity - Vector3(0, 0, -1)).norm < 1e-12)
            #expect(truth.activity == .stationary)
        }
        let mean = stats.mean
        let tolerance = 4 * sigma / Double(stats.count).squareRoot()
        #expect(abs(mean.x) < tolerance)
        #expect(abs(mean.y) < tolerance)
        #expect(abs(mean.z + 1) < tolerance)
        // The white noise is what the density promises (σ within 10 %).
        let sd = stats.standardDeviation
        for axis in [sd.x, sd.y, sd.z] { #expect(abs(axis / sigma - 1) < 0.1) }
        // The seeded bias is a consumer-part figure: non-zero, below 5 σ of the model's spread.
        #expect(bias.norm > 0 && bias.norm < 5 * errors.accelerometerBiasSigma * 3.0.squareRoot())
    }

    @Test func idealSensorsReadTheTruthExactly() {
        var imu = SimulatedIMU(scenario: .mixedDay, seed: 2, errors: .ideal)
        for i in 0..<2000 {
            let t = Double(i) * 0.37
            let s = imu.sample(at: t, sensors: allSensors)
            let truth = imu.truth
            let expected = truth.attitude.inverseRotate(Vector3(0, 0, -1) - truth.acceleration / standardGravity)
            #expect((s.acceleration! - expected).norm < 1e-12)
            #expect((s.acceleration! - (truth.gravity + truth.userAcceleration)).norm < 1e-12)
            #expect((s.rotationRate! - truth.rotationRate).norm < 1e-12)
            #expect((s.magneticField! - truth.attitude.inverseRotate(SimulatedIMU.defaultEarthField)).norm < 1e-9)
            #expect(abs(s.pressureKPa! - SimulatedIMU.isaPressure(altitude: truth.altitude)) < 1e-12)
        }
    }

    @Test func magnetometerMatchesTheConfiguredField() {
        let field = Vector3(19.0, 0.5, -45.5)
        let errors = SensorErrorModel.consumerMEMS
        var run = SimulatedRecording(
            imu: SimulatedIMU(scenario: .rotating, seed: 5, earthField: field),
            rateHz: 50,
            duration: 60,
            sensors: [.magnetometer]
        )
        var worldStats = VectorStatistics()
        var maxNormError = 0.0
        var attitudesSeen = 0.0
        while let (sample, truth) = run.next() {
            let corrected = sample.magneticField! - truth.hardIron
            maxNormError = max(maxNormError, abs(corrected.norm - field.norm))
            worldStats.add(truth.attitude.rotate(corrected))
            attitudesSeen = max(attitudesSeen, truth.attitude.angle(to: .identity))
            #expect(sample.acceleration == nil && sample.rotationRate == nil && sample.pressureKPa == nil)
        }
        #expect(attitudesSeen > 2)  // the device really turned
        // 6 σ of the 3-axis noise bounds the norm error of every sample.
        #expect(maxNormError < 6 * errors.magnetometerNoise)
        // In world axes every reading is the field: the mean matches it to the noise of the mean.
        #expect(
            (worldStats.mean - field).norm < 4 * errors.magnetometerNoise / Double(worldStats.count).squareRoot() * 3
        )
        // Default field: Vienna, NWU.
        #expect(SimulatedIMU.defaultEarthField == Vector3(21.4, -1.6, -44.0))
    }

    /// Integrates the gyroscope (minus the bias the truth reports) from the first truth attitude and compares
    /// with the truth over a whole rotation script.
    private func integratedAttitudeError(errors: SensorErrorModel, rate: Double) -> Double {
        let imu = SimulatedIMU(scenario: .rotating, seed: 9, errors: errors)
        let duration = RotationMotion().duration
        var run = SimulatedRecording(imu: imu, rateHz: rate, duration: duration, sensors: [.gyroscope])
        guard let (first, firstTruth) = run.next() else { return .infinity }
        var q = firstTruth.attitude
        var previous = first.rotationRate! - firstTruth.gyroscopeBias
        var worst = 0.0
        let dt = 1 / rate
        while let (sample, truth) = run.next() {
            let omega = sample.rotationRate! - truth.gyroscopeBias
            let mean = (previous + omega) * 0.5
            // Body-frame rates: q ← q ⊗ exp(ω dt / 2).
            q = (q * Quaternion(axis: mean, angle: mean.norm * dt)).normalized
            previous = omega
            worst = max(worst, q.angle(to: truth.attitude))
        }
        return worst
    }

    @Test func integratingTheGyroscopeReproducesTheRotations() {
        // Noise-free: only the integration error remains.
        #expect(integratedAttitudeError(errors: .ideal, rate: 200) < 0.01 * .pi / 180)
        // Consumer noise: angle random walk ≈ density · √(T/2) ≈ 0.03° over the 56 s script.
        #expect(integratedAttitudeError(errors: .consumerMEMS, rate: 200) < 0.3 * .pi / 180)
    }

    @Test func rotatingCoversEveryAxisAtTheScriptedRates() {
        var run = SimulatedRecording(
            imu: SimulatedIMU(scenario: .rotating, seed: 1, errors: .ideal),
            rateHz: 100,
            duration: RotationMotion().duration
        )
        var peak = Vector3.zero
        while let (_, truth) = run.next() {
            let w = truth.rotationRate
            peak = Vector3(max(peak.x, abs(w.x)), max(peak.y, abs(w.y)), max(peak.z, abs(w.z)))
            #expect(truth.acceleration.norm < 1e-9)
        }
        // Peak of a smootherstep turn is 1.875 × angle / duration: z 180° in 2 s, x and y 360° in 6 s.
        #expect(abs(peak.z - 1.875 * .pi / 2) < 0.01)
        #expect(abs(peak.x - 1.875 * 2 * .pi / 6) < 0.01)
        #expect(abs(peak.y - 1.875 * 2 * .pi / 6) < 0.01)
    }

    @Test(arguments: [1.8, 1.5, 2.1])
    func walkingStepsFollowTheCadence(cadence: Double) {
        var options = SimulationOptions()
        options.walkingCadenceHz = cadence
        let duration = 60.0
        var run = SimulatedRecording(
            imu: SimulatedIMU(scenario: .walking, seed: 4, options: options),
            rateHz: 100,
            duration: duration,
            sensors: [.accelerometer]
        )
        var last = SimulationTruth()
        var strikes = 0
        var previousSteps = 0
        while let (_, truth) = run.next() {
            if truth.steps > previousSteps { strikes += truth.steps - previousSteps }
            previousSteps = truth.steps
            last = truth
            #expect(truth.activity == .walking)
        }
        #expect(abs(Double(last.steps) - cadence * duration) <= 1)
        #expect(strikes == last.steps)
        #expect(abs(last.cadence - cadence) < 1e-9)
        #expect(abs(last.distance - 0.7 * cadence * duration) < 1)
    }

    @Test func walkingAccelerationPeaksOncePerStep() {
        // The vertical (world) acceleration crosses +2 m/s² upward once per step: a pedometer's signal.
        var run = SimulatedRecording(
            imu: SimulatedIMU(scenario: .walking, seed: 4, errors: .ideal),
            rateHz: 100,
            duration: 30,
            sensors: [.accelerometer]
        )
        var crossings = 0
        var previous = 0.0
        var truth = SimulationTruth()
        while let (_, t) = run.next() {
            let up = t.acceleration.z
            if previous < 2, up >= 2 { crossings += 1 }
            previous = up
            truth = t
        }
        #expect(abs(crossings - truth.steps) <= 1)
    }

    @Test(arguments: [true, false])
    func stairsChangeAltitudeByThreeMetresPerFloor(up: Bool) {
        let stairs = GaitMotion.stairs(floors: 4, up: up)
        let imu = SimulatedIMU(scenario: up ? .stairsUp : .stairsDown, seed: 8)
        var run = SimulatedRecording(imu: imu, rateHz: 50, duration: stairs.duration + 4, sensors: [.barometer])
        var start = (pressure: 0.0, altitude: 0.0, count: 0.0)
        var end = (pressure: 0.0, altitude: 0.0, count: 0.0)
        var endTruth = SimulationTruth()
        while let frame = run.next() {
            let (sample, truth) = frame
            // Before the first step lands (the start-up ramp is one step, 0.625 s) and after the climb.
            if truth.time <= 0.3 {
                start = (start.pressure + sample.pressureKPa!, start.altitude + truth.altitude, start.count + 1)
            } else if truth.time > stairs.duration + 0.5 {
                end = (end.pressure + sample.pressureKPa!, end.altitude + truth.altitude, end.count + 1)
                endTruth = truth
            }
        }
        let climbed = end.altitude / end.count - start.altitude / start.count
        #expect(abs(climbed - (up ? 12 : -12)) < 0.05)
        #expect(endTruth.floorsAscended == (up ? 4 : 0))
        #expect(endTruth.floorsDescended == (up ? 0 : 4))
        // 18 stair steps and 2 landing steps per floor.
        #expect(endTruth.steps == 4 * 20)
        #expect(endTruth.activity == .stationary)
        // Near 200 m the ISA gradient is ρg ≈ 0.0118 kPa/m; the measured drop per metre agrees within 5 %.
        let perMetre = (end.pressure / end.count - start.pressure / start.count) / climbed
        #expect(perMetre < -0.0112 && perMetre > -0.0124)
    }

    @Test func liftsDoNotCountFloors() {
        let climb = GaitMotion.stairs(floors: 4, up: true).duration
        let period = MotionScript(scenario: .stairsUp, options: SimulationOptions(), seed: 8).period
        var run = SimulatedRecording(
            imu: SimulatedIMU(scenario: .stairsUp, seed: 8, errors: .ideal),
            rateHz: 10,
            duration: 2 * period - 1,
            sensors: [.barometer]
        )
        var maxAltitude = 0.0
        var first: SimulationTruth?
        var truth = SimulationTruth()
        var sawLift = false
        while let (_, t) = run.next() {
            if first == nil { first = t }
            maxAltitude = max(maxAltitude, t.altitude)
            if t.time > climb, t.velocity.z < -1 { sawLift = true }
            truth = t
        }
        #expect(sawLift)
        // Two climbs of 4 floors, back down by lift after each.
        #expect(truth.floorsAscended == 8)
        #expect(truth.floorsDescended == 0)
        #expect(maxAltitude > first!.altitude + 11.9)
        #expect(abs(truth.altitude - first!.altitude) < 0.01)
    }

    @Test func sameSeedSameOutputDifferentSeedDifferent() {
        for scenario in SimulationScenario.allCases {
            var a = SimulatedRecording(imu: SimulatedIMU(scenario: scenario, seed: 42), rateHz: 100, duration: 5)
            var b = SimulatedRecording(imu: SimulatedIMU(scenario: scenario, seed: 42), rateHz: 100, duration: 5)
            var c = SimulatedRecording(imu: SimulatedIMU(scenario: scenario, seed: 43), rateHz: 100, duration: 5)
            var identical = true
            var differs = false
            while let (sa, ta) = a.next(), let (sb, tb) = b.next(), let (sc, _) = c.next() {
                if sa != sb || ta != tb { identical = false }
                if sa.acceleration != sc.acceleration || sa.magneticField != sc.magneticField { differs = true }
            }
            #expect(identical, "\(scenario.rawValue) with the same seed repeats")
            #expect(differs, "\(scenario.rawValue) with another seed differs")
        }
    }

    @Test func requestedSensorsOnlyAndIndependentNoiseStreams() {
        var both = SimulatedIMU(scenario: .walking, seed: 6)
        var accelOnly = SimulatedIMU(scenario: .walking, seed: 6)
        for i in 0..<500 {
            let t = Double(i) / 100
            let s1 = both.sample(at: t, sensors: allSensors)
            let s2 = accelOnly.sample(at: t, sensors: [.accelerometer])
            #expect(
                s2.rotationRate == nil && s2.magneticField == nil && s2.pressureKPa == nil && s2.temperatureC == nil
            )
            #expect(s1.acceleration == s2.acceleration)
            #expect(s1.timestamp == t)
        }
    }

    @Test func noiseScalesWithTheRateAfterARateChange() {
        var imu = SimulatedIMU(scenario: .stationary, seed: 12)
        var slow = VectorStatistics()
        var fast = VectorStatistics()
        var t = 0.0
        for _ in 0..<4000 {
            t += 1.0 / 50
            slow.add(imu.sample(at: t, sensors: [.accelerometer, .gyroscope]).acceleration!)
        }
        let switchTruth = imu.truth
        for _ in 0..<4000 {
            t += 1.0 / 800
            fast.add(imu.sample(at: t, sensors: [.accelerometer, .gyroscope]).acceleration!)
        }
        // σ ∝ √rate: 16× the rate, 4× the noise.
        let ratio = fast.standardDeviation.x / slow.standardDeviation.x
        #expect(abs(ratio - 4) < 0.4)
        // The bias wanders continuously across the change: after 5 s at 800 Hz it moved by ≈ σ_rw √5 s.
        let drift = (imu.truth.gyroscopeBias - switchTruth.gyroscopeBias).norm
        #expect(drift < 6 * SensorErrorModel.consumerMEMS.gyroscopeBiasRandomWalk * 5.0.squareRoot() * 3.0.squareRoot())
    }

    @Test func recordingFillsABufferAndCountsBothEnds() {
        var run = SimulatedRecording(imu: SimulatedIMU(scenario: .driving, seed: 1), rateHz: 100, duration: 2)
        #expect(run.count == 201)
        var buffer = [IMUSample](repeating: IMUSample(timestamp: -1), count: 150)
        let first = buffer.withUnsafeMutableBufferPointer { run.fill($0) }
        #expect(first == 150)
        #expect(buffer[149].timestamp == 1.49)
        let second = buffer.withUnsafeMutableBufferPointer { run.fill($0) }
        #expect(second == 51)
        #expect(buffer[50].timestamp == 2)
        #expect(run.next() == nil)
    }

    @Test func magneticAttitudePutsTheFieldInTheNorthUpPlane() {
        var run = SimulatedRecording(
            imu: SimulatedIMU(scenario: .walking, seed: 3, errors: .ideal),
            rateHz: 20,
            duration: 30,
            sensors: [.magnetometer]
        )
        let field = SimulatedIMU.defaultEarthField
        let horizontal = (field.x * field.x + field.y * field.y).squareRoot()
        while let (sample, truth) = run.next() {
            let inMagneticFrame = truth.magneticAttitude.rotate(sample.magneticField!)
            #expect(abs(inMagneticFrame.y) < 1e-9)
            #expect(abs(inMagneticFrame.x - horizontal) < 1e-9)
            #expect(abs(inMagneticFrame.z - field.z) < 1e-9)
            // The two attitudes differ by the declination (4.3° east for the default field).
            #expect(abs(truth.magneticAttitude.angle(to: truth.attitude) - atan2(1.6, 21.4)) < 1e-9)
        }
    }

    @Test func scenarioNamesAreTheConfigurationStrings() throws {
        #expect(
            SimulationScenario.allCases.map(\.rawValue) == [
                "stationary", "walking", "running", "stairs-up", "stairs-down", "rotating", "cycling", "driving",
                "mixed-day",
            ]
        )
        #expect(try SimulationScenario(configValue: "stairs-up") == .stairsUp)
        #expect(throws: SimulatedSourceError.self) { try SimulationScenario(configValue: "swimming") }
    }

    @Test func isaPressureGradient() {
        #expect(abs(SimulatedIMU.isaPressure(altitude: 0) - 101.325) < 1e-12)
        let gradient = SimulatedIMU.isaPressure(altitude: 1) - SimulatedIMU.isaPressure(altitude: 0)
        #expect(abs(gradient + 0.012) < 0.0003)
    }
}
