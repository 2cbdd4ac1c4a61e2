import MotionModel
import Testing

@testable import MotionHistory

@Suite struct RetentionTests {
    private let day = 86_400.0

    private func recordDay(_ store: HistoryStore, at t0: Double, steps: Int) {
        store.recordPedometer(PedometerSnapshot(sessionID: "s\(t0)", time: t0, numberOfSteps: 0))
        store.recordPedometer(PedometerSnapshot(sessionID: "s\(t0)", time: t0 + 10, numberOfSteps: steps))
        store.recordActivity(
            MotionActivity(startDate: 0, walking: t0.truncatingRemainder(dividingBy: 2 * day) == 0),
            at: t0
        )
    }

    @Test func pruningDeletesRowsOlderThanTheRetention() throws {
        let fixture = HistoryFixture()
        let t0 = 100 * day
        let store = try fixture.open(retentionDays: 2, now: t0)
        #expect(store.retainedSince == t0 - 2 * day)
        recordDay(store, at: t0, steps: 10)
        recordDay(store, at: t0 + day, steps: 20)
        recordDay(store, at: t0 + 2 * day, steps: 40)
        #expect(try store.queryPedometerData(from: t0, to: t0 + 3 * day).numberOfSteps == 70)

        store.prune(now: t0 + 2.5 * day)
        #expect(store.retainedSince == t0 + 0.5 * day)
        // The first day is gone; a window that starts earlier is clipped to what is kept.
        let kept = try store.queryPedometerData(from: 0, to: t0 + 3 * day)
        #expect(kept.numberOfSteps == 60)
        #expect(kept.startDate == t0 + day)
        #expect(
            try store.queryActivityStarting(from: 0, to: t0 + 3 * day).map(\.startDate) == [t0 + day, t0 + 2 * day]
        )
        // A window entirely before the retained history is refused with a sentence that says so.
        do {
            _ = try store.queryPedometerData(from: t0, to: t0 + 10)
            Issue.record("expected outsideRetention")
        } catch {
            #expect(error.code == .outsideRetention)
            #expect(error.description.contains("history keeps 2 days"))
        }
        #expect(throws: HistoryError.self) { try store.queryActivityStarting(from: 0, to: t0) }
        #expect(fixture.reports.all.isEmpty)
    }

    @Test func pruningRunsAtMostHourly() throws {
        let fixture = HistoryFixture()
        let t0 = 100 * day
        let store = try fixture.open(retentionDays: 1, now: t0)
        store.prune(now: t0 + 3_599)
        #expect(store.retainedSince == t0 - day)
        store.prune(now: t0 + 3_600)
        #expect(store.retainedSince == t0 + 3_600 - day)
        // A clock that went backwards prunes at once.
        store.prune(now: t0)
        #expect(store.retainedSince == t0 - day)
    }

    @Test func openingPrunesWithItsClock() throws {
        let fixture = HistoryFixture()
        let t0 = 100 * day
        do {
            let first = try fixture.open(retentionDays: 7, now: t0)
            recordDay(first, at: t0, steps: 10)
            recordDay(first, at: t0 + 5 * day, steps: 20)
        }
        let reopened = try fixture.open(retentionDays: 7, now: t0 + 8 * day)
        #expect(try reopened.queryPedometerData(from: t0, to: t0 + 9 * day).numberOfSteps == 20)
        #expect(try reopened.queryActivityStarting(from: t0, to: t0 + 9 * day).map(\.startDate) == [t0 + 5 * day])
    }

    @Test(arguments: [0, -1])
    func retentionMustBePositive(days: Int) {
        let fixture = HistoryFixture()
        do {
            _ = try fixture.open(retentionDays: days)
            Issue.record("expected invalidRetention")
        } catch let error as HistoryError {
            #expect(error.code == .invalidRetention)
            #expect(error.description.contains("pedometer.history_retention_days"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
