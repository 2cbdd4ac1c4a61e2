/// What one snapshot added over the previous snapshot of its session: the row the store keeps.
///
/// Storing increments rather than cumulative counters makes every row answer on its own: a query sums the
/// rows that overlap it, whichever session they belong to, and pruning old rows cannot turn a session's
/// first retained counters into a burst of steps.
struct PedometerInterval: Equatable {
    /// Start of the interval, Unix s: the previous snapshot's time, or `end` for a session's first snapshot
    /// (whose counters, counted since the session started, are then an increment at one instant).
    var start: Double
    /// The snapshot's time, Unix s.
    var end: Double
    var steps: Double
    /// nil when either snapshot had no distance.
    var distance: Double?
    var floorsAscended: Double?
    var floorsDescended: Double?
    var activeTime: Double

    /// The increments from `previous` (same session) to `current`.
    ///
    /// A counter that went down restarted at zero without a new session, so its whole value is the
    /// increment. A clock that stepped backwards (`current.time <= previous.time`) gets the increment at
    /// `current.time` as one instant, so no steps are lost.
    init(from previous: PedometerSnapshot?, to current: PedometerSnapshot) {
        end = current.time
        guard let previous else {
            start = current.time
            steps = Double(current.numberOfSteps)
            distance = current.distance
            floorsAscended = current.floorsAscended.map(Double.init)
            floorsDescended = current.floorsDescended.map(Double.init)
            activeTime = current.activeTime
            return
        }
        start = min(previous.time, current.time)
        steps = Self.increment(Double(previous.numberOfSteps), Double(current.numberOfSteps))
        distance = Self.increment(previous.distance, current.distance)
        floorsAscended = Self.increment(
            previous.floorsAscended.map(Double.init),
            current.floorsAscended.map(Double.init)
        )
        floorsDescended = Self.increment(
            previous.floorsDescended.map(Double.init),
            current.floorsDescended.map(Double.init)
        )
        activeTime = Self.increment(previous.activeTime, current.activeTime)
    }

    init(
        start: Double,
        end: Double,
        steps: Double,
        distance: Double?,
        floorsAscended: Double?,
        floorsDescended: Double?,
        activeTime: Double
    ) {
        self.start = start
        self.end = end
        self.steps = steps
        self.distance = distance
        self.floorsAscended = floorsAscended
        self.floorsDescended = floorsDescended
        self.activeTime = activeTime
    }

    /// The share of this interval's increments that falls in `[from, to]`, assuming they accrued evenly in
    /// time: 1 for an instant inside, 0 for one outside.
    func fraction(from: Double, to: Double) -> Double {
        if end <= start { return from <= end && end <= to ? 1 : 0 }
        let overlap = min(end, to) - max(start, from)
        return overlap > 0 ? overlap / (end - start) : 0
    }

    private static func increment(_ previous: Double, _ current: Double) -> Double {
        current >= previous ? current - previous : current
    }

    private static func increment(_ previous: Double?, _ current: Double?) -> Double? {
        guard let previous, let current else { return nil }
        return increment(previous, current)
    }
}
