import AgentSimulation
import Testing

@Suite struct FaultExplorerTests {
    @Test func aFewSchedules() {
        let explorer = FaultExplorer(minutes: 10)
        let summary = explorer.explore(seeds: 1...20, maxFailures: 5) { outcome in
            print(
                "seed \(outcome.schedule.seed): \(outcome.passed ? "ok" : "FAILED") jobs \(outcome.jobs) publications \(outcome.publications) starts \(outcome.starts)"
            )
            if !outcome.passed {
                print(outcome.schedule)
                for violation in outcome.violations { print("  VIOLATION: \(violation)") }
            }
        }
        print("\(summary.schedules) schedules in \(summary.wallSeconds) s")
        #expect(summary.failures.isEmpty)
    }
}
