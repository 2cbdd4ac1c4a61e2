import Foundation
import Logging

/// Runs schedules, seed after seed, and reports the first that breaks an invariant with its schedule, which
/// `motion-bench simulate --seed S` runs again bit for bit.
package struct FaultExplorer: Sendable {
    package struct Summary: Sendable {
        package var schedules = 0
        package var simulatedSeconds = 0.0
        package var wallSeconds = 0.0
        package var jobs = 0
        package var publications = 0
        package var commands = 0
        package var starts = 0
        package var failures: [ScheduleRun.Outcome] = []

        package init() {}

        /// Counts one schedule's figures (not its failure: the caller decides).
        package mutating func add(_ outcome: ScheduleRun.Outcome, minutes: Double) {
            schedules += 1
            simulatedSeconds += minutes * 60
            jobs += outcome.jobs
            publications += outcome.publications
            commands += outcome.commands
            starts += outcome.starts
        }

        package mutating func merge(_ other: Summary) {
            schedules += other.schedules
            simulatedSeconds += other.simulatedSeconds
            jobs += other.jobs
            publications += other.publications
            commands += other.commands
            starts += other.starts
            failures += other.failures
        }
    }

    package var minutes: Double
    package var quietSeconds: Double

    package init(minutes: Double = 10, quietSeconds: Double = 90) {
        self.minutes = minutes
        self.quietSeconds = quietSeconds
    }

    /// Runs a schedule (one drawn from a seed, or one kept in a file: `FaultSchedule` is Codable).
    package func run(_ schedule: FaultSchedule, logger: Logger? = nil) -> ScheduleRun.Outcome {
        ScheduleRun(schedule, logger: logger).run()
    }

    /// Runs the schedule of one seed.
    package func run(seed: UInt64, logger: Logger? = nil) -> ScheduleRun.Outcome {
        ScheduleRun(FaultSchedule.draw(seed: seed, minutes: minutes, quietSeconds: quietSeconds), logger: logger).run()
    }

    /// Runs every seed of `seeds`; stops after `maxFailures` failing ones.
    package func explore(
        seeds: some Sequence<UInt64>,
        maxFailures: Int = 1,
        progress: (ScheduleRun.Outcome) -> Void = { _ in }
    ) -> Summary {
        var summary = Summary()
        let started = Date()
        for seed in seeds {
            let outcome = run(seed: seed)
            summary.add(outcome, minutes: minutes)
            progress(outcome)
            if !outcome.passed {
                summary.failures.append(outcome)
                if summary.failures.count >= maxFailures { break }
            }
        }
        summary.wallSeconds = Date().timeIntervalSince(started)
        return summary
    }
}
