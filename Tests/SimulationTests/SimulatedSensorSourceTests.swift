import AgentPorts
import MotionModel
import Synchronization
import Testing

@testable import Simulation

/// Collects what a source delivers.
private final class CollectingSink: SampleSink {
    private let samples = Mutex<[IMUSample]>([])
    private let faults = Mutex<[SourceFault]>([])

    init() {
        samples.withLock { $0.reserveCapacity(10_000) }
    }

    func ingest(_ sample: IMUSample) { samples.withLock { $0.append(sample) } }
    func report(_ fault: SourceFault) { faults.withLock { $0.append(fault) } }

    var delivered: [IMUSample] { samples.withLock { $0 } }
    var count: Int { samples.withLock { $0.count } }
}

private func monotonicNow() -> Double { MonotonicClock.now() }

private func plan(_ rateHz: Double, _ sensors: Set<SensorType>) -> AcquisitionPlan {
    AcquisitionPlan(devices: [SimulatedSensorSource.deviceID: DevicePlan(rateHz: rateHz, sensors: sensors)])
}

@Suite struct SimulatedSensorSourceTests {
    @Test func offersOneDeviceWithAnODRLadder() throws {
        let source = try SimulatedSensorSource(scenario: .walking, seed: 1, rateHz: 200)
        #expect(source.devices.count == 1)
        let device = source.devices[0]
        #expect(device.id == "simulated")
        #expect(device.name == "simulated-imu")
        #expect(device.sensors == Set(SensorType.allCases))
        #expect(device.supportedRates == .list([1.5625, 3.125, 6.25, 12.5, 25, 50, 100, 200]))
        #expect(source.summary.contains("walking"))
        #expect(throws: SimulatedSourceError.self) { try SimulatedSensorSource(scenario: .walking, rateHz: 0.5) }
    }

    @Test func rejectsPlansForOtherDevicesAndBadRates() throws {
        let source = try SimulatedSensorSource(scenario: .walking)
        #expect(throws: SimulatedSourceError.self) {
            try source.apply(AcquisitionPlan(devices: ["iio:device0": DevicePlan(rateHz: 100, sensors: [.gyroscope])]))
        }
        #expect(throws: SimulatedSourceError.self) { try source.apply(plan(-5, [.gyroscope])) }
        try source.apply(plan(0, []))  // off is fine
    }

    @Test func deliversInRealTimeHonoursPlansAndStops() async throws {
        let source = try SimulatedSensorSource(scenario: .walking, seed: 3, rateHz: 200)
        let sink = CollectingSink()
        try source.apply(plan(100, Set(SensorType.allCases)))
        let started = monotonicNow()
        let task = Task { try await source.run(into: sink) }
        // Pacing is measured from the first delivery on, so a slow start of the task on a busy machine
        // does not count against it.
        while sink.count == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let windowStart = (count: sink.count, time: monotonicNow())
        try await Task.sleep(for: .milliseconds(1000))
        let windowEnd = (count: sink.count, time: monotonicNow())
        let elapsed = windowEnd.time - windowStart.time
        // ≈ rate × time, ±10 % (plus one sample in flight at either end).
        #expect(abs(Double(windowEnd.count - windowStart.count) - 100 * elapsed) <= 10 * elapsed + 2)
        let atFirstCheck = windowEnd.count

        // Slower, accelerometer only; 30 Hz is not on the ladder and becomes 50 Hz.
        try source.apply(plan(30, [.accelerometer]))
        try await Task.sleep(for: .milliseconds(500))
        // Off: nothing more arrives.
        try source.apply(AcquisitionPlan())
        try await Task.sleep(for: .milliseconds(100))
        let whenOff = sink.count
        try await Task.sleep(for: .milliseconds(300))
        #expect(sink.count == whenOff)

        task.cancel()
        try await task.value  // returns: the thread stopped

        let samples = sink.delivered
        #expect(samples.count == whenOff)
        let early = samples.prefix(atFirstCheck)
        #expect(
            early.allSatisfy {
                $0.acceleration != nil && $0.rotationRate != nil && $0.magneticField != nil && $0.pressureKPa != nil
            }
        )
        let late = samples.dropFirst(atFirstCheck + 2)
        #expect(late.count > 10)
        #expect(
            late.allSatisfy {
                $0.acceleration != nil && $0.rotationRate == nil && $0.magneticField == nil && $0.pressureKPa == nil
            }
        )
        // Timestamps: monotonic seconds, strictly increasing, on the 100 Hz and then the 50 Hz grid.
        for (a, b) in zip(early, early.dropFirst()) { #expect(abs(b.timestamp - a.timestamp - 0.01) < 1e-6) }
        for (a, b) in zip(late, late.dropFirst()) { #expect(abs(b.timestamp - a.timestamp - 0.02) < 1e-6) }
        // Monotonic clock seconds, from after the run began to before the first delivery was seen.
        #expect(samples[0].timestamp >= started && samples[0].timestamp <= windowStart.time)
        // The truth follows the deliveries: simulation time advanced with the clock (0 at the first sample).
        #expect(!source.isRunning)
        let truth = source.truth
        #expect(abs(truth.time - (samples[samples.count - 1].timestamp - samples[0].timestamp)) < 1e-6)
        #expect(truth.activity == .walking && truth.steps > 0)
    }

    @Test func aSecondConcurrentRunIsRefused() async throws {
        let source = try SimulatedSensorSource(scenario: .stationary)
        let sink = CollectingSink()
        try source.apply(plan(50, [.accelerometer]))
        let task = Task { try await source.run(into: sink) }
        // Wait until the first run owns the simulator.
        while !source.isRunning { try await Task.sleep(for: .milliseconds(10)) }
        await #expect(throws: SimulatedSourceError.self) { try await source.run(into: sink) }
        task.cancel()
        try await task.value
        #expect(!source.isRunning)
    }

    @Test func cancellationBeforeStartReturnsPromptly() async throws {
        let source = try SimulatedSensorSource(scenario: .stationary)
        try source.apply(plan(200, Set(SensorType.allCases)))
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await source.run(into: CollectingSink())
        }
        try await task.value
        #expect(!source.isRunning)
    }
}
