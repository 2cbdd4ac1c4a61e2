import AgentPorts
import MotionModel
import Simulation
import Synchronization

/// The simulated IMU (`SimulatedIMU`) as a sensor source paced by the virtual clock: one device carrying all
/// four sensors with an ODR ladder of round rates, timestamps on the virtual monotonic clock. No thread: `run`
/// is a task that sleeps on the clock between samples, so samples interleave with everything else the agent
/// does in one deterministic order.
public final class VirtualSensorSource: SensorSource, @unchecked Sendable {
    public static let deviceID = "simulated"

    public let devices: [SensorDevice]
    public let summary: String
    private let clock: VirtualClock

    private struct State {
        var rateHz = 0.0
        var sensors: Set<SensorType> = []
        var imu: SimulatedIMU
        /// Bumped by `apply`, so a sleeping run notices a new plan at its next sample.
        var generation = 0
        var delivered = 0
        var faultOnApply: String?
    }

    private let state: Mutex<State>

    /// The rates the device accepts, Hz: round values, as IMUs' ODR tables are.
    public static let rates: [Double] = [1, 2, 5, 10, 20, 50, 100, 200]

    public init(clock: VirtualClock, scenario: SimulationScenario = .stationary, seed: UInt64) {
        self.clock = clock
        devices = [
            SensorDevice(
                id: Self.deviceID,
                name: "simulated-imu",
                sensors: Set(SensorType.allCases),
                supportedRates: .list(Self.rates)
            )
        ]
        summary = "virtual (scenario \(scenario.rawValue), seed \(seed))"
        let imu = SimulatedIMU(scenario: scenario, seed: seed, nominalRateHz: Self.rates.last!)
        state = Mutex(State(imu: imu))
    }

    public func apply(_ plan: AcquisitionPlan) throws {
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

    /// Samples delivered so far.
    public var delivered: Int { state.withLock { $0.delivered } }

    /// The rate the device runs at now, Hz (0: off).
    public var rateHz: Double { state.withLock { $0.rateHz } }

    public func run(into sink: SampleSink) async throws {
        var next = clock.monotonicSeconds()
        while !Task.isCancelled {
            let (rate, generation) = state.withLock { ($0.rateHz, $0.generation) }
            guard rate > 0 else {
                // Off: look again every second (the controller switches the device back on through `apply`).
                try await clock.sleep(seconds: 1)
                next = clock.monotonicSeconds()
                continue
            }
            try await clock.sleep(untilMonotonic: next)
            let now = clock.monotonicSeconds()
            let sample = state.withLock { state -> IMUSample? in
                guard state.generation == generation, state.rateHz > 0 else { return nil }
                var sample = state.imu.sample(at: now, sensors: state.sensors)
                sample.timestamp = now
                state.delivered += 1
                return sample
            }
            if let sample { sink.ingest(sample) }
            next = max(next + 1 / rate, now)
        }
    }
}
