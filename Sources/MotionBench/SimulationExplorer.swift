import AgentSimulation
import ArgumentParser
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The fault explorer (issue 40): schedules of broker outages, crashes, power cuts, full disks, clock steps,
/// desired documents, commands and floods, each run by the production agent on virtual time and checked against
/// the invariants (AgentSimulation, docs/simulation.md). A failing seed prints its schedule; `--seed S` runs it
/// again, bit for bit.
struct SimulationExplorer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Runs the fault explorer: random schedules of faults against simulated fleets, with invariants."
    )

    @Option(help: "How many schedules to run (seeds first, first + 1, …).") var seeds = 200
    @Option(help: "Run only this seed (and print its schedule).") var seed: UInt64?
    @Option(help: "The first seed.") var first: UInt64 = 1
    @Option(help: "Simulated minutes per schedule.") var minutes: Double = 10
    @Option(help: "Schedules run side by side (threads; default: one per core).") var workers: Int?
    @Option(help: "Stop after this many failing schedules.") var maxFailures = 1
    @Flag(help: "Print every schedule's outcome.") var verbose = false
    @Option(help: "With --seed: print the agents' log at this level and above (trace, debug, info, notice, …).")
    var log: String?
    @Option(help: "With --seed: write the schedule as JSON to this file (it replays whatever later versions draw).")
    var save: String?
    @Option(help: "Run the schedule kept in this JSON file (written by --save) instead of drawing one.")
    var schedule: String?

    func run() throws {
        // Swift seeds String hashing per process; a seed must replay the same way in every process.
        if getenv("SWIFT_DETERMINISTIC_HASHING") == nil {
            setenv("SWIFT_DETERMINISTIC_HASHING", "1", 1)
            var arguments = CommandLine.arguments.map { strdup($0) }
            arguments.append(nil)
            execv("/proc/self/exe", &arguments)
            throw ValidationError(
                "could not run again with SWIFT_DETERMINISTIC_HASHING=1: \(String(cString: strerror(errno)))"
            )
        }
        let explorer = FaultExplorer(minutes: minutes)
        if let schedule {
            let kept = try JSONDecoder().decode(
                FaultSchedule.self,
                from: Data(contentsOf: URL(fileURLWithPath: schedule))
            )
            let outcome = explorer.run(kept)
            print(outcome.schedule)
            report(outcome)
            if !outcome.passed { throw ExitCode(1) }
            return
        }
        if let seed {
            var logger: Logger?
            if let log {
                guard let level = Logger.Level(rawValue: log) else {
                    throw ValidationError(
                        "--log \(log): use one of trace, debug, info, notice, warning, error, critical"
                    )
                }
                var printing = Logger(label: "motion-agent.simulation") { StreamLogHandler.standardError(label: $0) }
                printing.logLevel = level
                logger = printing
            }
            let drawn = FaultSchedule.draw(seed: seed, minutes: minutes, quietSeconds: explorer.quietSeconds)
            if let save {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                try encoder.encode(drawn).write(to: URL(fileURLWithPath: save))
                print("schedule of seed \(seed) written to \(save)")
            }
            let outcome = explorer.run(drawn, logger: logger)
            print(outcome.schedule)
            report(outcome)
            if !outcome.passed { throw ExitCode(1) }
            return
        }
        let workerCount = max(1, workers ?? ProcessInfo.processInfo.activeProcessorCount)
        let next = Atomic<UInt64>(first)
        let last = first + UInt64(max(0, seeds)) - 1
        let results = Mutex<[FaultExplorer.Summary]>([])
        let stop = Atomic<Bool>(false)
        let output = Mutex(())
        let started = Date()
        var threads: [Thread] = []
        let finished = DispatchGroup()
        for _ in 0..<workerCount {
            finished.enter()
            let thread = Thread { [verbose, maxFailures] in
                var summary = FaultExplorer.Summary()
                while !stop.load(ordering: .relaxed) {
                    let seed = next.add(1, ordering: .relaxed).oldValue
                    guard seed <= last else { break }
                    let outcome = explorer.run(seed: seed)
                    summary.add(outcome, minutes: explorer.minutes)
                    if verbose || !outcome.passed {
                        output.withLock { _ in
                            if !outcome.passed { print(outcome.schedule) }
                            report(outcome)
                        }
                    }
                    if !outcome.passed {
                        summary.failures.append(outcome)
                        let failures =
                            results.withLock { $0.reduce(0) { $0 + $1.failures.count } } + summary.failures.count
                        if failures >= maxFailures { stop.store(true, ordering: .relaxed) }
                    }
                }
                results.withLock { $0.append(summary) }
                finished.leave()
            }
            thread.stackSize = 8 << 20
            threads.append(thread)
            thread.start()
        }
        finished.wait()
        let wall = Date().timeIntervalSince(started)
        let total = results.withLock { $0.reduce(into: FaultExplorer.Summary()) { $0.merge($1) } }
        let perMinute = Double(total.schedules) / wall * 60
        print(
            String(
                format:
                    "%d schedules of %.0f simulated minutes in %.1f s on %d workers: %.0f schedules a minute (%.0f× real time); %d process starts, %d commands, %d messages taken by the brokers, %d jobs; %d failed",
                total.schedules,
                minutes,
                wall,
                workerCount,
                perMinute,
                total.simulatedSeconds / wall,
                total.starts,
                total.commands,
                total.publications,
                total.jobs,
                total.failures.count
            )
        )
        if let failure = total.failures.first {
            print("rerun the first failure: motion-bench simulate --seed \(failure.schedule.seed) --minutes \(minutes)")
            throw ExitCode(1)
        }
    }

    private func report(_ outcome: ScheduleRun.Outcome) {
        print(
            "seed \(outcome.schedule.seed): \(outcome.passed ? "held" : "FAILED") — \(outcome.starts) starts, \(outcome.samples) samples, \(outcome.commands) commands, \(outcome.publications) messages, \(outcome.jobs) jobs"
        )
        for violation in outcome.violations { print("  violation: \(violation)") }
    }
}
