import ArgumentParser
import CBenchSupport
import MotionEstimation
import MotionModel
import Simulation

/// ns per estimator update on simulated walking: 9-axis and 6-axis device motion, pedometer, activity (at 100 Hz,
/// and at 25 Hz, where the classifier's once-a-second work is shared by the fewest samples), motion events (falls,
/// impacts, free falls, tilt; with and without the gyroscope) — and the heap allocations per sample of the
/// activity's and the motion events' updates.
struct EstimationSpeed: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "estimation",
        abstract:
            "ns per device-motion (9-axis, 6-axis), pedometer, activity and motion-events update on simulated walking; "
            + "activity and motion-events allocations."
    )

    @Option(help: "Samples per repetition (at 100 Hz).") var samples = 60_000
    @Option(help: "Repetitions; the median is reported.") var repetitions = 7

    func run() {
        BenchRow.printTable(
            "Estimation (median of \(repetitions) × \(samples) samples)",
            Self.measure(samples: samples, repetitions: repetitions)
        )
    }

    struct Result {
        var nineAxis: Double
        var sixAxis: Double
        var pedometer: Double
        var activity: Double
        var activity25 = 0.0
        var activityAllocations = 0.0
        var events = 0.0
        var eventsAccelerometerOnly = 0.0
        var eventsAllocations: UInt64 = 0
    }

    static func measure(samples: Int, repetitions: Int) -> [BenchRow] {
        let rate = 100.0
        let recording = SimulatedRecording(
            imu: SimulatedIMU(scenario: .walking, seed: 3, nominalRateHz: rate),
            rateHz: rate,
            duration: Double(samples - 1) / rate
        )
        let nine = Array(recording.map(\.sample))
        let six = nine.map { sample -> IMUSample in
            var s = sample
            s.magneticField = nil
            return s
        }
        var checksum = 0.0
        var r = Result(nineAxis: 0, sixAxis: 0, pedometer: 0, activity: 0)
        r.nineAxis = median(repetitions) {
            var estimator = DeviceMotionEstimator(referenceFrame: .xMagneticNorthZVertical, sampleInterval: 1 / rate)
            return time(nine.count) {
                for sample in nine { if let m = estimator.update(sample) { checksum += m.attitude.w } }
            }
        }
        r.sixAxis = median(repetitions) {
            var estimator = DeviceMotionEstimator(referenceFrame: .xArbitraryZVertical, sampleInterval: 1 / rate)
            return time(six.count) {
                for sample in six { if let m = estimator.update(sample) { checksum += m.attitude.w } }
            }
        }
        r.pedometer = median(repetitions) {
            var pedometer = Pedometer()
            return time(nine.count) {
                for sample in nine { if pedometer.update(sample) != nil { checksum += 1 } }
                checksum += Double(pedometer.numberOfSteps)
            }
        }
        r.activity = median(repetitions) {
            var activity = ActivityEstimator()
            return time(nine.count) {
                for sample in nine { if activity.update(sample) != nil { checksum += 1 } }
            }
        }
        // 25 Hz, the lowest rate the agent offers: every 4th sample of the same walk.
        let quarter = stride(from: 0, to: nine.count, by: 4).map { nine[$0] }
        r.activity25 = median(repetitions) {
            var activity = ActivityEstimator()
            return time(quarter.count) {
                for sample in quarter { if activity.update(sample) != nil { checksum += 1 } }
            }
        }
        // Allocations on this thread during the activity's updates, after the estimator is built (its fixed
        // buffers are allocated once, in init).
        var activity = ActivityEstimator()
        for sample in nine.prefix(1000) { _ = activity.update(sample) }
        // The counter must see allocations at all, or a zero would prove nothing.
        let probeBefore = bench_alloc_thread()
        let probe = [Int](repeating: samples, count: 1000 + samples % 7)
        checksum += Double(probe.count)
        let counterWorks = bench_alloc_thread() > probeBefore
        let before = bench_alloc_thread()
        for sample in nine.dropFirst(1000) { if activity.update(sample) != nil { checksum += 1 } }
        r.activityAllocations =
            counterWorks ? Double(bench_alloc_thread() - before) / Double(max(nine.count - 1000, 1)) : .nan
        // Every kind on (tilt too), the fall detector's whole path; allocations counted on this thread over one
        // repetition after a warm-up pass (the ring is allocated in init, before the count starts).
        var eventsSettings = MotionEventDetector.Settings.defaults
        eventsSettings.tiltEnabled = true
        r.events = median(repetitions) {
            var detector = MotionEventDetector(settings: eventsSettings)
            return time(six.count) {
                for sample in six { for _ in detector.update(sample) { checksum += 1 } }
            }
        }
        let accelerometerOnly = six.map { sample -> IMUSample in
            var s = sample
            s.rotationRate = nil
            return s
        }
        r.eventsAccelerometerOnly = median(repetitions) {
            var detector = MotionEventDetector(settings: eventsSettings)
            return time(accelerometerOnly.count) {
                for sample in accelerometerOnly { for _ in detector.update(sample) { checksum += 1 } }
            }
        }
        do {
            var detector = MotionEventDetector(settings: eventsSettings)
            for sample in six { for _ in detector.update(sample) { checksum += 1 } }
            let before = bench_alloc_thread()
            for sample in six { for _ in detector.update(sample) { checksum += 1 } }
            r.eventsAllocations = bench_alloc_thread() - before
        }
        return [
            BenchRow(
                name: "device motion 9-axis update",
                value: String(format: "%.0f ns", r.nineAxis),
                target: "< 1000 ns",
                met: r.nineAxis < 1000
            ),
            BenchRow(name: "device motion 6-axis update", value: String(format: "%.0f ns", r.sixAxis)),
            BenchRow(name: "pedometer update", value: String(format: "%.0f ns", r.pedometer)),
            BenchRow(
                name: "activity update, 100 Hz",
                value: String(format: "%.0f ns", r.activity),
                target: "≤ 2000 ns",
                met: r.activity <= 2000
            ),
            BenchRow(
                name: "activity update, 25 Hz",
                value: String(format: "%.0f ns", r.activity25),
                target: "≤ 2000 ns",
                met: r.activity25 <= 2000
            ),
            BenchRow(
                name: "activity allocations per sample",
                value: r.activityAllocations.isNaN
                    ? "counter inactive" : String(format: "%.4f", r.activityAllocations),
                target: "0",
                met: r.activityAllocations == 0
            ),
            BenchRow(
                name: "motion events update (accel + gyro)",
                value: String(format: "%.0f ns", r.events),
                target: "≤ 2000 ns",
                met: r.events <= 2000
            ),
            BenchRow(
                name: "motion events update (accel only)",
                value: String(format: "%.0f ns", r.eventsAccelerometerOnly),
                target: "≤ 2000 ns",
                met: r.eventsAccelerometerOnly <= 2000
            ),
            BenchRow(
                name: "motion events allocations per sample",
                value: counterWorks
                    ? String(format: "%.4f", Double(r.eventsAllocations) / Double(max(six.count, 1)))
                    : "counter inactive",
                target: "0",
                met: counterWorks && r.eventsAllocations == 0
            ),
            // Printed so the optimiser cannot drop the work.
            BenchRow(name: "estimation checksum", value: String(format: "%.3f", checksum)),
        ]
    }

    private static func median(_ repetitions: Int, _ body: () -> Double) -> Double {
        Statistics.median((0..<max(1, repetitions)).map { _ in body() })
    }

    /// ns per item of `body` over `count` items.
    private static func time(_ count: Int, _ body: () -> Void) -> Double {
        let start = bench_monotonic_ns()
        body()
        return Double(bench_monotonic_ns() - start) / Double(max(count, 1))
    }
}
