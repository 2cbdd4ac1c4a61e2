import AgentPorts
import MotionModel
import Simulation
import Synchronization

/// A sensor source paced by the virtual clock: one device carrying all four sensors with an ODR ladder of round
/// rates, timestamps on the virtual monotonic clock. No thread: `run` is a task that sleeps on the clock between
/// blocks of samples, so samples interleave with everything else the agent does in one deterministic order.
///
/// The readings are a device lying still, face up, with a little noise (`StillReadings`): the explorer is after
/// the control and delivery paths, and the estimators' accuracy is measured on recordings (BENCHMARKS.md); a
/// scenario of the full simulated IMU (`SimulatedIMU`, five times the cost per sample) can be asked for.
package final class VirtualSensorSource: SensorSource, @unchecked Sendable {
    package static let deviceID = "simulated"

    package let devices: [SensorDevice]
    package let summary: String
    private let clock: VirtualClock

    private struct State {
        var rateHz = 0.0
        var sensors: Set<SensorType> = []
        var imu: SimulatedIMU?
        var still: StillReadings
        /// Bumped by `apply`, so a sleeping run notices a new plan at its next sample.
        var generation = 0
        var delivered = 0
        var faultOnApply: String?
        var fall: ScriptedFall?
    }

    private let state: Mutex<State>

    /// The rates the device accepts, Hz: round values, as IMUs' ODR tables are.
    package static let rates: [Double] = [1, 2, 5, 10, 20, 50, 100, 200]

    /// - Parameter scenario: the simulated IMU's scenario; nil: a device lying still (cheap).
    package init(clock: VirtualClock, scenario: SimulationScenario? = nil, seed: UInt64) {
        self.clock = clock
        devices = [
            SensorDevice(
                id: Self.deviceID,
                name: "simulated-imu",
                sensors: Set(SensorType.allCases),
                supportedRates: .list(Self.rates)
            )
        ]
        summary = "virtual (\(scenario.map { "scenario \($0.rawValue)" } ?? "lying still"), seed \(seed))"
        let imu = scenario.map { SimulatedIMU(scenario: $0, seed: seed, nominalRateHz: Self.rates.last!) }
        state = Mutex(State(imu: imu, still: StillReadings(seed: seed)))
    }

    package func apply(_ plan: AcquisitionPlan) throws {
        let unknown = plan.devices.keys.filter { $0 != Self.deviceID }
        guard unknown.isEmpty else {
            throw AgentError("plan names unknown devices \(unknown.sorted()) — plan only '\(Self.deviceID)'")
        }
        let requested = plan.devices[Self.deviceID] ?? .off
        state.withLock { state in
            state.generation += 1
            if requested.isOff || !(requested.rateHz > 0) {
                state.rateHz = 0
                state.sensors = []
            } else {
                state.rateHz = devices[0].supportedRates.lowest(atLeast: requested.rateHz)
                state.sensors = requested.sensors
            }
        }
    }

    /// From `fall.start` on, the device lying still falls (`ScriptedFall`; only without a scenario).
    package func script(_ fall: ScriptedFall) {
        state.withLock { $0.fall = fall }
    }

    /// Samples delivered so far.
    package var delivered: Int { state.withLock { $0.delivered } }

    /// The rate the device runs at now, Hz (0: off).
    package var rateHz: Double { state.withLock { $0.rateHz } }

    /// Samples are handed over in blocks, as an IIO buffer with a watermark hands them over: at most every this
    /// many seconds (and at least every sample period), on a grid every device shares — so a fleet's samples arrive
    /// at the same instants, each sample with its own timestamp.
    package static let blockSeconds = 0.5

    package func run(into sink: SampleSink) async throws {
        var next = clock.monotonicSeconds()
        while !Task.isCancelled {
            let (rate, generation) = state.withLock { ($0.rateHz, $0.generation) }
            guard rate > 0 else {
                // Off: look again every second (the controller switches the device back on through `apply`).
                try await clock.sleep(seconds: 1)
                next = clock.monotonicSeconds()
                continue
            }
            let period = max(1 / rate, Self.blockSeconds)
            try await clock.sleep(untilMonotonic: ((next / period).rounded(.down) + 1) * period)
            let now = clock.monotonicSeconds()
            var changed = false
            while next <= now, !changed {
                let sample = state.withLock { state -> IMUSample? in
                    guard state.generation == generation, state.rateHz > 0 else { return nil }
                    var sample: IMUSample
                    if state.imu != nil {
                        sample = state.imu!.sample(at: next, sensors: state.sensors)
                        sample.timestamp = next
                    } else {
                        sample = state.still.sample(at: next, sensors: state.sensors)
                        if let a = sample.acceleration, let fallen = state.fall?.acceleration(at: next) {
                            // The still device's noise, around the script's force instead of (0, 0, −1).
                            sample.acceleration = Vector3(x: a.x + fallen.x, y: a.y + fallen.y, z: a.z + 1 + fallen.z)
                        }
                    }
                    state.delivered += 1
                    return sample
                }
                if let sample { sink.ingest(sample) } else { changed = true }
                next += 1 / rate
            }
            if changed { next = now }
        }
    }
}

/// A device lying face up at rest: gravity, the Earth's field, sea-level-ish pressure, and a small deterministic
/// noise so that no two samples are alike (their payloads identify them).
struct StillReadings: Sendable {
    private var random: SimulationRandom

    init(seed: UInt64) { random = SimulationRandom(seed: seed ^ 0x57_11) }

    private mutating func noise(_ scale: Double) -> Double { (random.unit() - 0.5) * scale }

    mutating func sample(at time: Double, sensors: Set<SensorType>) -> IMUSample {
        var sample = IMUSample(timestamp: time)
        for sensor in sensors {
            switch sensor {
            case .accelerometer: sample.acceleration = Vector3(noise(0.004), noise(0.004), -1 + noise(0.004))
            case .gyroscope: sample.rotationRate = Vector3(noise(0.002), noise(0.002), noise(0.002))
            case .magnetometer: sample.magneticField = Vector3(21.4 + noise(0.2), -1.6 + noise(0.2), -44 + noise(0.2))
            case .barometer: sample.pressureKPa = 98.95 + noise(0.002)
            }
        }
        return sample
    }
}
