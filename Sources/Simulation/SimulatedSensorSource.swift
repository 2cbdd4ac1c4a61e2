import AgentPorts
import Logging
import MotionModel
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The simulator as the agent's hardware port: one device (`simulated`, `simulated-imu`) carrying all four
/// sensors, paced in real time on its own thread and timestamped on the monotonic clock like IIO samples.
///
/// The device offers an ODR ladder like real IMUs: the configured top rate and its halvings down to 1 Hz.
/// `apply` may change the rate and the enabled sensors at any time; the acquisition thread picks the change
/// up before its next sample. With the device off (absent from the plan, or no sensors) nothing is
/// delivered. The simulated world keeps its own time, which starts at 0 with the first `run` and continues
/// where it stopped on a later `run`.
package final class SimulatedSensorSource: SensorSource {
    package static let deviceID = "simulated"
    package static let deviceName = "simulated-imu"

    /// The configured top rate, Hz.
    package let rateHz: Double
    package let devices: [SensorDevice]
    package let summary: String

    private struct Plan {
        var rateHz: Double
        var sensors: Set<SensorType>
    }

    private struct State {
        var plan = Plan(rateHz: 0, sensors: [])
        /// The simulator, parked here while no acquisition thread owns it.
        var imu: SimulatedIMU?
        /// Simulation time reached by the previous run, s.
        var simulationTime = 0.0
    }

    private let state: Mutex<State>
    /// Written by the acquisition thread after every sample; separate from `state` so `apply` and the
    /// per-sample update never wait on each other.
    private let latestTruth: Mutex<SimulationTruth>
    /// Bumped by every `apply`, so the acquisition thread takes the lock only when the plan changed.
    private let planGeneration = Atomic<Int>(0)
    private let logger: Logger

    /// - Parameters:
    ///   - rateHz: the top of the ODR ladder, Hz (`source.simulated.rate_hz`, 1–4000).
    ///   - earthField: the Earth's field at the configured place, NWU, µT.
    package init(
        scenario: SimulationScenario,
        seed: UInt64 = 1,
        rateHz: Double = 200,
        earthField: Vector3 = SimulatedIMU.defaultEarthField,
        altitudeM: Double = 200,
        errors: SensorErrorModel = .consumerMEMS,
        options: SimulationOptions = SimulationOptions(),
        logger: Logger = Logger(label: "motion-agent.simulation")
    ) throws {
        guard rateHz.isFinite, rateHz >= 1, rateHz <= 4000 else {
            throw SimulatedSourceError(
                .invalidRate,
                "simulated source rate \(rateHz) Hz is out of range — set source.simulated.rate_hz between 1 and 4000"
            )
        }
        self.rateHz = rateHz
        var ladder: [Double] = []
        var rate = rateHz
        while rate >= 1 - 1e-9 {
            ladder.append(rate)
            rate /= 2
        }
        devices = [
            SensorDevice(
                id: SimulatedSensorSource.deviceID,
                name: SimulatedSensorSource.deviceName,
                sensors: Set(SensorType.allCases),
                supportedRates: .list(ladder.reversed())
            )
        ]
        let rateText = SimulatedSensorSource.format(rateHz)
        summary = "simulated (scenario \(scenario.rawValue), seed \(seed), up to \(rateText) Hz)"
        let imu = SimulatedIMU(
            scenario: scenario,
            seed: seed,
            earthField: earthField,
            altitudeM: altitudeM,
            errors: errors,
            options: options,
            nominalRateHz: rateHz
        )
        state = Mutex(State(imu: imu))
        latestTruth = Mutex(imu.truth)
        var logger = logger
        logger[metadataKey: "agent.source"] = "simulated"
        self.logger = logger
    }

    /// The ground truth at the last delivered sample (at simulation time 0 before the first), for tests
    /// and diagnostics that compare the agent's output with what really happened.
    package var truth: SimulationTruth {
        latestTruth.withLock { $0 }
    }

    /// Whether a `run` currently owns the simulator.
    package var isRunning: Bool {
        state.withLock { $0.imu == nil }
    }

    package func apply(_ plan: AcquisitionPlan) throws {
        let unknown = plan.devices.keys.filter { $0 != SimulatedSensorSource.deviceID }
        guard unknown.isEmpty else {
            throw SimulatedSourceError(
                .unknownDevice,
                "plan names device(s) \(unknown.sorted().joined(separator: ", ")) that the simulated source does not"
                    + " have — plan only '\(SimulatedSensorSource.deviceID)'"
            )
        }
        var next = Plan(rateHz: 0, sensors: [])
        if let requested = plan.devices[SimulatedSensorSource.deviceID], !requested.isOff {
            guard requested.rateHz.isFinite, requested.rateHz > 0 else {
                throw SimulatedSourceError(
                    .invalidRate,
                    "plan asks the simulated device for \(requested.rateHz) Hz — ask for a rate above 0 Hz, or an"
                        + " empty sensor set to switch it off"
                )
            }
            let supported = devices[0].supportedRates
            next = Plan(rateHz: supported.lowest(atLeast: requested.rateHz), sensors: requested.sensors)
        }
        state.withLock { $0.plan = next }
        planGeneration.add(1, ordering: .releasing)
        wakeup.wake()
        if next.sensors.isEmpty {
            logger.debug("simulated device off")
        } else {
            logger.debug(
                "simulated device plan",
                metadata: [
                    "simulation.rate_hz": "\(next.rateHz)",
                    "simulation.sensors": "\(next.sensors.map(\.rawValue).sorted().joined(separator: ","))",
                ]
            )
        }
    }

    package func run(into sink: SampleSink) async throws {
        let imu = try state.withLock { state -> SimulatedIMU in
            guard let imu = state.imu else {
                throw SimulatedSourceError(
                    .alreadyRunning,
                    "the simulated source is already running — cancel the running task before starting another"
                )
            }
            state.imu = nil
            return imu
        }
        let loop = AcquisitionLoop(source: self, sink: sink, imu: imu)
        logger.info("simulated acquisition started", metadata: ["simulation.summary": "\(summary)"])
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                loop.start(continuation)
            }
        } onCancel: {
            loop.stop()
        }
        logger.info("simulated acquisition stopped")
    }

    // MARK: - Used by the acquisition thread (AcquisitionLoop)

    var currentGeneration: Int { planGeneration.load(ordering: .acquiring) }

    /// Wakes the acquisition thread's sleep when the plan changes or the run stops.
    let wakeup = AcquisitionWakeup()

    func currentPlan() -> (rateHz: Double, sensors: Set<SensorType>) {
        state.withLock { ($0.plan.rateHz, $0.plan.sensors) }
    }

    var simulationTime: Double { state.withLock { $0.simulationTime } }

    @inline(__always)
    func publish(_ truth: SimulationTruth) {
        latestTruth.withLock { $0 = truth }
    }

    func park(_ imu: SimulatedIMU, simulationTime: Double) {
        state.withLock {
            $0.imu = imu
            $0.simulationTime = simulationTime
        }
    }

    func log(skipped: Int, lag: Double) {
        logger.warning(
            "simulated acquisition fell behind; skipped samples",
            metadata: ["simulation.skipped": "\(skipped)", "simulation.lag_s": "\(lag)"]
        )
    }

    private static func format(_ hz: Double) -> String {
        Int(exactly: hz).map(String.init) ?? String(hz)
    }
}
