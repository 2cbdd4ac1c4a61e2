import MotionModel
import Testing

@testable import MotionHistory

@Suite struct ActivityHistoryTests {
    private func record(_ store: HistoryStore) {
        store.recordActivity(MotionActivity(startDate: 1, walking: true, confidence: .low), at: 100)
        // Same flags, more confident: the segment started at 100 goes on and carries .high.
        store.recordActivity(MotionActivity(startDate: 6, walking: true, confidence: .high), at: 105)
        // Same flags, less confident: nothing changes.
        store.recordActivity(MotionActivity(startDate: 8, walking: true, confidence: .medium), at: 107)
        store.recordActivity(MotionActivity(startDate: 101, stationary: true, confidence: .medium), at: 200)
        // A car at a red light: both flags, a new segment.
        store.recordActivity(
            MotionActivity(startDate: 201, stationary: true, automotive: true, confidence: .high),
            at: 300
        )
        store.recordActivity(MotionActivity(startDate: 301, automotive: true, confidence: .high), at: 400)
    }

    @Test func segmentsComeBackInOrderWithFlagsAndConfidence() throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        record(store)
        let all = try store.queryActivityStarting(from: 0, to: 1_000)
        #expect(
            all == [
                MotionActivity(startDate: 100, walking: true, confidence: .high),
                MotionActivity(startDate: 200, stationary: true, confidence: .medium),
                MotionActivity(startDate: 300, stationary: true, automotive: true, confidence: .high),
                MotionActivity(startDate: 400, automotive: true, confidence: .high),
            ]
        )
        #expect(fixture.reports.all.isEmpty)
    }

    @Test func onlySegmentsStartingInTheWindowAreReturned() throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        record(store)
        // Walking was in progress at 150 but started before: Core Motion leaves it out.
        let middle = try store.queryActivityStarting(from: 150, to: 350)
        #expect(middle.map(\.startDate) == [200, 300])
        // Both bounds are inclusive.
        #expect(try store.queryActivityStarting(from: 200, to: 300).map(\.startDate) == [200, 300])
        #expect(try store.queryActivityStarting(from: 401, to: 1_000).isEmpty)
    }

    @Test func aQueryReturnsAtMostItsLimitAndPastItSaysWhereTheNextPageStarts() throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        record(store)
        // Exactly the limit: all of them.
        #expect(try store.queryActivityStarting(from: 0, to: 1_000, limit: 4).count == 4)
        // One more than the limit: refused, naming the interval that holds the first page and the next start.
        #expect {
            try store.queryActivityStarting(from: 0, to: 1_000, limit: 3)
        } throws: { error in
            let error = error as? HistoryError
            return error?.code == .tooManyResults
                && error?.description.contains("more than 3 activity segments start between 0.0 and 1000.0") == true
                && error?.description.contains("from=0.0 to=300.0 holds the first 3, and the next starts at 400.0")
                    == true
        }
        // The page it names answers.
        #expect(try store.queryActivityStarting(from: 0, to: 300, limit: 3).count == 3)
        #expect(HistoryStore.maximumActivitySegments == 1000)
    }

    @Test func segmentsSurviveReopenAndTheLastOneContinues() throws {
        let fixture = HistoryFixture()
        do {
            let first = try fixture.open()
            record(first)
        }
        let second = try fixture.open()
        // Still automotive after the restart: the segment from 400 goes on.
        second.recordActivity(MotionActivity(startDate: 0, automotive: true, confidence: .high), at: 450)
        second.recordActivity(MotionActivity(startDate: 0, unknown: true, confidence: .low), at: 500)
        let all = try second.queryActivityStarting(from: 0, to: 1_000)
        #expect(all.map(\.startDate) == [100, 200, 300, 400, 500])
        #expect(all.last == MotionActivity(startDate: 500, unknown: true, confidence: .low))
    }

    @Test func nonFiniteTimeIsReportedAndDropped() throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        store.recordActivity(MotionActivity(startDate: 0, walking: true), at: .infinity)
        #expect(fixture.reports.all.count == 1)
        #expect(try store.queryActivityStarting(from: 0, to: 1e12).isEmpty)
    }
}
