import MotionModel
import Testing

@testable import MotionHistory

@Suite struct PedometerHistoryTests {
    /// A 30 s walk: 20 steps in each of the first two 10 s intervals, 10 in the third.
    private func recordWalk(_ store: HistoryStore, session: String = "a", at t0: Double = 1_000) {
        let counters: [(Double, Int, Double, Double)] = [
            (0, 0, 0, 0), (10, 20, 14, 10), (20, 40, 28, 20), (30, 50, 35, 25),
        ]
        for (offset, steps, distance, active) in counters {
            store.recordPedometer(
                PedometerSnapshot(
                    sessionID: session,
                    time: t0 + offset,
                    numberOfSteps: steps,
                    distance: distance,
                    activeTime: active
                )
            )
        }
    }

    @Test func wholeSessionSumsItsIncrements() throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        recordWalk(store)
        let data = try store.queryPedometerData(from: 900, to: 2_000)
        #expect(data.numberOfSteps == 50)
        #expect(data.distance == 35)
        #expect(data.startDate == 1_000)
        #expect(data.endDate == 1_030)
        #expect(abs((data.averageActivePace ?? 0) - 25.0 / 35.0) < 1e-12)
        #expect(data.floorsAscended == nil)
        #expect(data.floorsDescended == nil)
        #expect(data.currentPace == nil)
        #expect(data.currentCadence == nil)
        #expect(fixture.reports.all.isEmpty)
    }

    @Test func partialIntervalsAreInterpolatedByTime() throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        recordWalk(store)
        // Half of the first interval (10 steps) and half of the second (10 steps).
        let middle = try store.queryPedometerData(from: 1_005, to: 1_015)
        #expect(middle.numberOfSteps == 20)
        #expect(abs((middle.distance ?? 0) - 14) < 1e-9)
        #expect(middle.startDate == 1_005)
        #expect(middle.endDate == 1_015)
        // The last quarter of the walk; the end is clipped to the last snapshot.
        let tail = try store.queryPedometerData(from: 1_025, to: 5_000)
        #expect(tail.numberOfSteps == 5)
        #expect(tail.startDate == 1_025)
        #expect(tail.endDate == 1_030)
        // 2.5 s of the first interval is 5 steps; rounding happens once, after summing.
        let slivers = try store.queryPedometerData(from: 1_000, to: 1_002.5)
        #expect(slivers.numberOfSteps == 5)
    }

    @Test func windowWithoutDataReportsNothing() throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        recordWalk(store)
        let before = try store.queryPedometerData(from: 100, to: 999)
        #expect(before == PedometerData(startDate: 100, endDate: 999, numberOfSteps: 0))
        // A window touching the walk only at its first instant gets the zero first snapshot, nothing more.
        let edge = try store.queryPedometerData(from: 500, to: 1_000)
        #expect(edge.numberOfSteps == 0)
    }

    @Test func restartAddsSessionsAcrossReopen() throws {
        let fixture = HistoryFixture()
        do {
            let first = try fixture.open()
            recordWalk(first, session: "before-restart", at: 1_000)
        }
        let second = try fixture.open()
        // Counters restart at zero in the new session.
        second.recordPedometer(
            PedometerSnapshot(sessionID: "after-restart", time: 2_000, numberOfSteps: 0, distance: 0)
        )
        second.recordPedometer(
            PedometerSnapshot(sessionID: "after-restart", time: 2_010, numberOfSteps: 30, distance: 21, activeTime: 10)
        )
        let both = try second.queryPedometerData(from: 0, to: 3_000)
        #expect(both.numberOfSteps == 80)
        #expect(both.distance == 56)
        #expect(both.startDate == 1_000)
        #expect(both.endDate == 2_010)
        // Half of each session's interval at the window's edges: 5 of the last 10 before, 15 of 30 after.
        let spanning = try second.queryPedometerData(from: 1_025, to: 2_005)
        #expect(spanning.numberOfSteps == 20)
        #expect(fixture.reports.all.isEmpty)
    }

    @Test func sameSessionContinuesAfterReopen() throws {
        let fixture = HistoryFixture()
        do {
            let first = try fixture.open()
            first.recordPedometer(PedometerSnapshot(sessionID: "s", time: 1_000, numberOfSteps: 0))
            first.recordPedometer(PedometerSnapshot(sessionID: "s", time: 1_010, numberOfSteps: 10))
        }
        let second = try fixture.open()
        // The increment is taken from the stored cumulative counters, not counted again from zero.
        second.recordPedometer(PedometerSnapshot(sessionID: "s", time: 1_020, numberOfSteps: 30))
        #expect(try second.queryPedometerData(from: 0, to: 2_000).numberOfSteps == 30)
        #expect(try second.queryPedometerData(from: 1_010, to: 1_020).numberOfSteps == 20)
    }

    @Test func firstSnapshotOfASessionIsAnInstant() throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        store.recordPedometer(PedometerSnapshot(sessionID: "late", time: 3_000, numberOfSteps: 12))
        store.recordPedometer(PedometerSnapshot(sessionID: "late", time: 3_010, numberOfSteps: 22))
        #expect(try store.queryPedometerData(from: 2_999, to: 3_000).numberOfSteps == 12)
        #expect(try store.queryPedometerData(from: 3_000.5, to: 3_100).numberOfSteps == 10)
    }

    @Test func counterResetAndBackwardClockKeepEveryStep() throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        store.recordPedometer(PedometerSnapshot(sessionID: "s", time: 1_000, numberOfSteps: 0))
        store.recordPedometer(PedometerSnapshot(sessionID: "s", time: 1_010, numberOfSteps: 100))
        // The pedometer restarted without a new session: 5 new steps, not -95.
        store.recordPedometer(PedometerSnapshot(sessionID: "s", time: 1_020, numberOfSteps: 5))
        // The wall clock stepped back 15 s: the 3 steps are counted at 1_005.
        store.recordPedometer(PedometerSnapshot(sessionID: "s", time: 1_005, numberOfSteps: 8))
        #expect(try store.queryPedometerData(from: 0, to: 2_000).numberOfSteps == 108)
        // 20 % of the first interval (20 steps) and the 3 at 1_005.
        #expect(try store.queryPedometerData(from: 1_004, to: 1_006).numberOfSteps == 23)
    }

    @Test func floorsAreSummedWhenPresent() throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        store.recordPedometer(
            PedometerSnapshot(sessionID: "s", time: 0, numberOfSteps: 0, floorsAscended: 0, floorsDescended: 0)
        )
        store.recordPedometer(
            PedometerSnapshot(sessionID: "s", time: 10, numberOfSteps: 20, floorsAscended: 3, floorsDescended: 1)
        )
        let all = try store.queryPedometerData(from: 0, to: 10)
        #expect(all.floorsAscended == 3)
        #expect(all.floorsDescended == 1)
        #expect(all.distance == nil)
        #expect(all.averageActivePace == nil)
        let half = try store.queryPedometerData(from: 5, to: 10)
        #expect(half.floorsAscended == 2)  // 1.5 rounds away from zero
        #expect(half.floorsDescended == 1)  // 0.5 likewise
    }

    static let badWindows: [(Double, Double)] = [
        (.nan, 10), (0, .nan), (10, 0), (-.infinity, 0), (0, .infinity),
    ]

    @Test(arguments: badWindows)
    func badWindowsAreRefused(from: Double, to: Double) throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        #expect(throws: HistoryError.self) { try store.queryPedometerData(from: from, to: to) }
        do {
            _ = try store.queryActivityStarting(from: from, to: to)
            Issue.record("expected a HistoryError")
        } catch {
            #expect(error.code == .invalidInterval)
            #expect(error.description.contains("from <= to"))
        }
    }

    @Test func nonFiniteSnapshotIsReportedAndDropped() throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        store.recordPedometer(PedometerSnapshot(sessionID: "s", time: .nan, numberOfSteps: 10))
        #expect(fixture.reports.all.count == 1)
        #expect(try store.queryPedometerData(from: 0, to: 10_000).numberOfSteps == 0)
    }
}

@Suite struct ConcurrentHistoryTests {
    @Test func concurrentWritersAndReadersKeepEveryIncrement() async throws {
        let fixture = HistoryFixture()
        let store = try fixture.open()
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for index in 0...50 {
                        store.recordPedometer(
                            PedometerSnapshot(
                                sessionID: "w\(writer)",
                                time: 1_000 + Double(index),
                                numberOfSteps: index * 2
                            )
                        )
                        store.recordActivity(
                            MotionActivity(startDate: 0, walking: index % 2 == 0),
                            at: Double(writer * 1_000 + index)
                        )
                    }
                }
                group.addTask {
                    for _ in 0..<20 {
                        _ = try? store.queryPedometerData(from: 0, to: 2_000)
                    }
                }
            }
        }
        #expect(try store.queryPedometerData(from: 0, to: 2_000).numberOfSteps == 4 * 100)
        #expect(fixture.reports.all.isEmpty)
    }
}
