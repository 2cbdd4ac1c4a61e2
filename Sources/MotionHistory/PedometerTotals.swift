import MotionModel

/// Sums stored pedometer intervals over a query window, the way `HistoryStore.queryPedometerData` answers.
enum PedometerTotals {
    /// - Parameters:
    ///   - intervals: the rows that may overlap `[from, to]`, any session, any order.
    ///   - from, to: the window, Unix s, `from <= to`.
    /// - Returns: the increments inside the window (each interval's share by time), rounded to whole steps
    ///   and floors at the end so partial intervals do not each lose a fraction; `startDate`/`endDate` are
    ///   the window clipped to the span the contributing intervals cover, or the window itself without data.
    static func sum(_ intervals: [PedometerInterval], from: Double, to: Double) -> PedometerData {
        var steps = 0.0
        var distance: Double?
        var ascended: Double?
        var descended: Double?
        var activeTime = 0.0
        var covered: (start: Double, end: Double)?
        for interval in intervals {
            let share = interval.fraction(from: from, to: to)
            // An interval touching the window only at an edge contributes nothing and covers nothing.
            guard share > 0 else { continue }
            steps += interval.steps * share
            activeTime += interval.activeTime * share
            if let value = interval.distance { distance = (distance ?? 0) + value * share }
            if let value = interval.floorsAscended { ascended = (ascended ?? 0) + value * share }
            if let value = interval.floorsDescended { descended = (descended ?? 0) + value * share }
            let start = max(interval.start, from)
            let end = min(interval.end, to)
            covered = covered.map { (min($0.start, start), max($0.end, end)) } ?? (start, end)
        }
        var pace: Double?
        if let distance, distance > 0, activeTime > 0 {
            pace = activeTime / distance  // s/m
        }
        return PedometerData(
            startDate: covered?.start ?? from,
            endDate: covered?.end ?? to,
            numberOfSteps: Int(steps.rounded()),
            distance: distance,
            floorsAscended: ascended.map { Int($0.rounded()) },
            floorsDescended: descended.map { Int($0.rounded()) },
            currentPace: nil,
            currentCadence: nil,
            averageActivePace: pace
        )
    }
}
