import AgentPorts
import MotionModel
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The acquisition thread's state and body. The thread owns the simulator while it runs and hands it back
/// to the source when it ends.
final class AcquisitionLoop: Sendable {
    let source: SimulatedSensorSource
    let sink: SampleSink
    private let stopRequested = Atomic<Bool>(false)
    private let payload: Mutex<(SimulatedIMU?, CheckedContinuation<Void, Error>?)>

    /// Longest sleep while the device is off: `stop` and a new plan wake the thread before it.
    static let idleInterval = 3600.0
    /// A loop further behind than this (or 4 periods, if longer) skips ahead instead of catching up.
    static let maximumLag = 0.5

    init(source: SimulatedSensorSource, sink: SampleSink, imu: SimulatedIMU) {
        self.source = source
        self.sink = sink
        payload = Mutex((imu, nil))
    }

    func stop() {
        stopRequested.store(true, ordering: .releasing)
        source.wakeup.wake()
    }

    func start(_ continuation: CheckedContinuation<Void, Error>) {
        payload.withLock { $0.1 = continuation }
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread,
            nil,
            { raw in
                guard let raw else { return nil }
                let loop = Unmanaged<AcquisitionLoop>.fromOpaque(raw).takeRetainedValue()
                loop.body()
                return nil
            },
            context
        )
        if status != 0 {
            Unmanaged<AcquisitionLoop>.fromOpaque(context).release()
            let imu = payload.withLock { $0.0.take() }
            if let imu { source.park(imu, simulationTime: imu.truth.time) }
            continuation.resume(
                throwing: SimulatedSourceError(
                    .threadStartFailed,
                    "could not start the simulated acquisition thread (pthread_create error \(status))"
                        + " — check the process's thread limit (ulimit -u)"
                )
            )
            return
        }
        pthread_detach(thread)
    }

    private func body() {
        guard var imu = payload.withLock({ $0.0.take() }) else { return }
        // Simulation time = monotonic time − offset, fixed at the first sample so the simulation continues
        // exactly where the previous run stopped.
        var offset: Double? = nil
        var generation = Int.min
        var rateHz = 0.0
        var sensors: Set<SensorType> = []
        var anchor = 0.0
        var k = 0
        var lastDeadline: Double? = nil
        var lastSimulationTime = source.simulationTime
        var recovering = false

        while !stopRequested.load(ordering: .acquiring) {
            let current = source.currentGeneration
            if current != generation {
                generation = current
                let plan = source.currentPlan()
                let wasOff = sensors.isEmpty
                if plan.rateHz != rateHz || wasOff {
                    // Re-anchor the deadline ladder at the last sample so the new period starts from it.
                    if let last = lastDeadline, !wasOff {
                        anchor = last
                        k = 1
                    } else {
                        anchor = MonotonicClock.now()
                        k = 0
                    }
                }
                rateHz = plan.rateHz
                sensors = plan.sensors
            }
            let now = MonotonicClock.now()
            if sensors.isEmpty || rateHz <= 0 {
                lastDeadline = nil
                source.wakeup.sleep(until: now + AcquisitionLoop.idleInterval)
                continue
            }
            let period = 1 / rateHz
            let deadline = anchor + Double(k) * period
            if deadline > now {
                // Until the next sample, or earlier for a new plan or a stop (`wakeup`).
                source.wakeup.sleep(until: deadline)
                continue
            }
            let lag = now - deadline
            if lag > max(AcquisitionLoop.maximumLag, 4 * period) {
                // Far behind (the machine stalled): skip to now rather than flood the sink with a burst.
                let skip = Int((lag / period).rounded(.down))
                k += skip
                source.log(skipped: skip, lag: lag)
                sink.report(
                    SourceFault(
                        deviceID: SimulatedSensorSource.deviceID,
                        message: "simulated acquisition fell \(lag) s behind and skipped \(skip) samples",
                        recovered: false
                    )
                )
                recovering = true
                continue
            }
            if offset == nil {
                // A later run resumes one period after the instant the previous run ended on.
                offset = deadline - (lastSimulationTime > 0 ? lastSimulationTime + period : 0)
            }
            let time = max(deadline - (offset ?? deadline), lastSimulationTime)
            var sample = imu.sample(at: time, sensors: sensors)
            sample.timestamp = deadline
            lastSimulationTime = time
            lastDeadline = deadline
            k += 1
            source.publish(imu.truth)
            sink.ingest(sample)
            if recovering {
                recovering = false
                sink.report(
                    SourceFault(
                        deviceID: SimulatedSensorSource.deviceID,
                        message: "simulated acquisition is back on time",
                        recovered: true
                    )
                )
            }
        }

        source.park(imu, simulationTime: lastSimulationTime)
        let continuation = payload.withLock { $0.1.take() }
        continuation?.resume()
    }
}
