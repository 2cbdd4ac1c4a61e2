import AgentSimulation
import Foundation
import Testing

/// Schedules the fault explorer found failing, kept as they were drawn (`motion-bench simulate --seed S --save`),
/// so that they replay the same way whatever later versions of the explorer draw from their seeds.
@Suite struct FaultExplorerRegressionTests {
    static func schedule(_ name: String) throws -> FaultSchedule {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Schedules/\(name).json")
        return try JSONDecoder().decode(FaultSchedule.self, from: Data(contentsOf: file))
    }

    /// Seed 8: a device desired document made the magnetometer durable (QoS 1 from the fleet layer); the agent
    /// reported it in force while no durable log was open (issue 40). The explorer's first failing seed with the
    /// defect; it holds since the durable log opens when the configuration in force first asks for it.
    @Test func theDurableSettingOfADesiredDocumentIsInForce() throws {
        let outcome = ScheduleRun(try Self.schedule("durable-from-desired-state")).run()
        #expect(outcome.violations.isEmpty, "\(outcome.violations.joined(separator: "\n"))")
        #expect(outcome.starts >= 2)
    }

    /// The same seed twice gives the same run, to the job: what a failing seed's replay relies on.
    @Test func aScheduleReplaysBitForBit() throws {
        let schedule = try Self.schedule("durable-from-desired-state")
        let first = ScheduleRun(schedule).run()
        let second = ScheduleRun(schedule).run()
        #expect(first.jobs == second.jobs)
        #expect(first.publications == second.publications)
        #expect(first.samples == second.samples)
        #expect(first.violations == second.violations)
    }
}
