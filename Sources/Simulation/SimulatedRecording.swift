import MotionModel

/// A finite run of a `SimulatedIMU` at a fixed rate, as fast as the machine goes: for tests and
/// benchmarks. Sample `k` is taken at `startTime + k / rateHz` (computed, not accumulated, so long runs
/// do not drift).
///
/// ```swift
/// var run = SimulatedRecording(imu: SimulatedIMU(scenario: .walking, seed: 7), rateHz: 100, duration: 60)
/// while let (sample, truth) = run.next() { … }
/// ```
package struct SimulatedRecording: Sequence, IteratorProtocol, Sendable {
    package private(set) var imu: SimulatedIMU
    package let rateHz: Double
    package let sensors: Set<SensorType>
    package let startTime: Double
    /// Number of samples in the run: ⌊duration · rate⌋ + 1 (both ends included).
    package let count: Int
    /// Samples produced so far.
    package private(set) var index = 0

    package init(
        imu: SimulatedIMU,
        rateHz: Double,
        duration: Double,
        sensors: Set<SensorType> = Set(SensorType.allCases),
        startTime: Double = 0
    ) {
        precondition(rateHz > 0 && rateHz.isFinite, "rateHz must be a positive number of samples per second")
        self.imu = imu
        self.rateHz = rateHz
        self.sensors = sensors
        self.startTime = startTime
        count = Swift.max(0, Int((duration * rateHz + 1e-9).rounded(.down)) + 1)
    }

    package mutating func next() -> (sample: IMUSample, truth: SimulationTruth)? {
        guard index < count else { return nil }
        let t = startTime + Double(index) / rateHz
        index += 1
        let sample = imu.sample(at: t, sensors: sensors)
        return (sample, imu.truth)
    }

    /// Fills `buffer` with the next samples (without truth); returns how many were written (fewer than the
    /// buffer holds only at the end of the run).
    package mutating func fill(_ buffer: UnsafeMutableBufferPointer<IMUSample>) -> Int {
        var written = 0
        while written < buffer.count, index < count {
            let t = startTime + Double(index) / rateHz
            index += 1
            buffer[written] = imu.sample(at: t, sensors: sensors)
            written += 1
        }
        return written
    }
}
