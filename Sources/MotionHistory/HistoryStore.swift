import MotionModel
import Synchronization

/// Step counts and activity segments kept on the device in SQLite, answering Core Motion's historical
/// queries (`CMPedometer.queryPedometerData(from:to:)`, `CMMotionActivityManager.queryActivityStarting`).
///
/// The agent records from a background task, never the sample path: a pedometer snapshot every ~10 s and at
/// each pause, resume and shutdown; the activity on each change; `prune(now:)` as often as it likes (it
/// works at most hourly). Every time is wall-clock Unix seconds, so history lines up across restarts.
///
/// Failures never escape as crashes. A corrupt file (not a database, malformed, failing `quick_check` at
/// open), one written by a newer agent, or one that fills up (SQLITE_FULL after it took writes) is reported,
/// renamed to `<path>.<corrupt|newer|full>-<UTC timestamp>` with its `-wal`/`-shm`, and replaced by a new
/// database. Any other failed write is reported and dropped; the store keeps working. Repeated identical
/// failures are reported once, with a count when they stop.
///
/// Thread-safe: one lock around one SQLite connection (WAL journal, `synchronous=NORMAL`, statements
/// prepared once). Calls are rare, so clarity wins over speed.
package final class HistoryStore: Sendable {
    /// Core Motion keeps seven days; so does the agent unless configured otherwise.
    package static let defaultRetentionDays = 7
    /// `prune(now:)` deletes at most this often, s.
    package static let pruneInterval = 3600.0

    /// The database file.
    package let path: String
    /// Days of history kept.
    package let retentionDays: Int

    private let report: @Sendable (String) -> Void
    private let state: Mutex<HistoryState>

    /// Opens the database at `path`, creating it (not its directory) if missing, migrating an older schema,
    /// and deleting rows older than `retentionDays` before `now`.
    ///
    /// - Parameters:
    ///   - path: the SQLite file, e.g. `<agent.state_dir>/history.sqlite`.
    ///   - retentionDays: days kept, ≥ 1 (config `pedometer.history_retention_days`).
    ///   - now: the wall clock, Unix s; tests pass a fixed time.
    ///   - report: receives one sentence per problem (a file moved aside, a dropped write), for the log.
    /// - Throws: `HistoryError` `.invalidRetention`, or `.cannotOpen` when no usable database can be opened
    ///   or created at `path` even after moving a bad file aside (a missing directory, no permission).
    package convenience init(
        path: String,
        retentionDays: Int = HistoryStore.defaultRetentionDays,
        now: Double = HistoryStore.wallClock(),
        report: @escaping @Sendable (String) -> Void
    ) throws(HistoryError) {
        try self.init(path: path, retentionDays: retentionDays, now: now, maxPageCount: nil, report: report)
    }

    /// - Parameter maxPageCount: caps every database this store opens at that many pages, so tests reach
    ///   SQLITE_FULL without filling a disk.
    init(
        path: String,
        retentionDays: Int,
        now: Double,
        maxPageCount: Int?,
        report: @escaping @Sendable (String) -> Void
    ) throws(HistoryError) {
        guard retentionDays >= 1 else { throw .invalidRetention(retentionDays) }
        self.path = path
        self.retentionDays = retentionDays
        self.report = report
        var state = HistoryState(path: path, retentionDays: retentionDays, maxPageCount: maxPageCount)
        var reports: [String] = []
        if case .failure(let error) = state.openDatabase(reports: &reports) {
            // The caller logs what we throw; do not report the same sentence twice.
            reports.filter { $0 != error.description }.forEach(report)
            throw error
        }
        state.prune(now: now, interval: Self.pruneInterval, reports: &reports)
        self.state = Mutex(state)
        reports.forEach(report)
    }

    /// The wall clock, Unix s.
    package static func wallClock() -> Double { DatabaseFile.wallClock() }

    /// Unix s before which history has been deleted (`-infinity` until the first pruning succeeds).
    package var retainedSince: Double { state.withLock { $0.retainedSince } }

    // MARK: Recording

    /// Stores the pedometer's cumulative counters at `snapshot.time`.
    ///
    /// The increment since the previous snapshot of the same session is what the store keeps, spread evenly
    /// over the time between the two. A session's first snapshot (counters since the session started) is an
    /// increment at its own instant, so record a zero snapshot when the pedometer starts. A counter that went
    /// down restarted at zero; a time at or before the previous snapshot's gets its increment at that instant.
    package func recordPedometer(_ snapshot: PedometerSnapshot) {
        guard snapshot.time.isFinite else {
            report("a pedometer snapshot at time \(snapshot.time) was dropped — history needs finite Unix times")
            return
        }
        locked { state, reports in
            state.write("store a pedometer snapshot", reports: &reports) { database throws(SQLiteError) in
                try database.record(snapshot)
            }
        }
    }

    /// Stores that `activity` (its flags and confidence) began at `wallTime`, Unix s.
    ///
    /// A new segment starts only when the flags differ from the segment in progress (`hasSameFlags`, as the
    /// agent publishes); a report with the same flags and a higher confidence raises the segment's confidence,
    /// so a segment carries the best confidence it reached. `activity.startDate` (sample clock) is ignored.
    package func recordActivity(_ activity: MotionActivity, at wallTime: Double) {
        guard wallTime.isFinite else {
            report("an activity at time \(wallTime) was dropped — history needs finite Unix times")
            return
        }
        locked { state, reports in
            state.write("store an activity segment", reports: &reports) { database throws(SQLiteError) in
                try database.record(activity, at: wallTime)
            }
        }
    }

    /// Deletes history older than `retentionDays` before `now` (Unix s), at most once per `pruneInterval`;
    /// call it as often as convenient.
    package func prune(now: Double) {
        guard now.isFinite else { return }
        locked { state, reports in
            state.prune(now: now, interval: Self.pruneInterval, reports: &reports)
        }
    }

    // MARK: Queries

    /// Steps, distance and floors taken in `[from, to]` (Unix s), like `CMPedometer.queryPedometerData`.
    ///
    /// Semantics: every stored interval between two snapshots of one session contributes the share of its
    /// increments that falls inside the window, by time (increments are assumed even within the ~10 s
    /// between snapshots); sessions are independent, so a restart in the window adds both sides. Steps and
    /// floors are rounded once, after summing. `startDate`/`endDate` are the window clipped to the data that
    /// contributed (the window itself when nothing did, with 0 steps and nil distance and floors). `distance`
    /// and floors are nil when no contributing snapshot had them. `averageActivePace` is active time over
    /// distance, s/m (nil without distance); `currentPace` and `currentCadence` are nil, as Core Motion
    /// leaves them for historical queries.
    ///
    /// A window that starts before the retained history is clipped to it (as Core Motion returns only the
    /// seven days it keeps).
    ///
    /// - Throws: `HistoryError` `.invalidInterval` (NaN, infinite, `from > to`), `.outsideRetention` (the
    ///   window ends before the retained history), `.queryFailed` (the database failed; reported).
    package func queryPedometerData(from: Double, to: Double) throws(HistoryError) -> PedometerData {
        try query(from: from, to: to) { database, start, end throws(SQLiteError) in
            PedometerTotals.sum(try database.intervals(from: start, to: end), from: start, to: end)
        }
    }

    /// The most segments one activity query returns: a reply of about 150 KB (each segment is ~140 bytes of
    /// JSON), well inside the shipped broker's 1.1 MB packet limit, and a bounded read under the control door.
    /// A week of history can hold far more (an activity that flips every few seconds).
    package static let maximumActivitySegments = 1000

    /// The activity segments that START in `[from, to]` (Unix s), oldest first, like
    /// `CMMotionActivityManager.queryActivityStarting`: a segment already in progress at `from` is not
    /// included. Each `startDate` is Unix s (not the sample clock); flags and confidence as recorded.
    ///
    /// - Throws: as `queryPedometerData(from:to:)`, and `.tooManyResults` when more than `limit` segments start
    ///   in the interval (its message names where the next page starts).
    package func queryActivityStarting(
        from: Double,
        to: Double,
        limit: Int = maximumActivitySegments
    ) throws(HistoryError) -> [MotionActivity] {
        let limit = max(1, limit)
        let segments = try query(from: from, to: to) { database, start, end throws(SQLiteError) in
            // One more than the limit tells "exactly the limit" from "more".
            try database.segments(from: start, to: end, limit: limit + 1)
        }
        guard segments.count <= limit else {
            throw .tooManyResults(
                from: from,
                to: to,
                limit: limit,
                lastIncluded: segments[limit - 1].startDate,
                nextStart: segments[limit].startDate
            )
        }
        return segments
    }

    // MARK: Helpers

    private func query<Value: Sendable>(
        from: Double,
        to: Double,
        _ body: (HistoryDatabase, Double, Double) throws(SQLiteError) -> Value
    ) throws(HistoryError) -> Value {
        guard from.isFinite, to.isFinite, from <= to else { throw .invalidInterval(from: from, to: to) }
        let days = retentionDays
        let result: Result<Value, HistoryError> = locked { state, reports in
            guard to >= state.retainedSince else {
                return .failure(.outsideRetention(from: from, to: to, retainedSince: state.retainedSince, days: days))
            }
            let start = max(from, state.retainedSince)
            return state.read(reports: &reports) { database throws(SQLiteError) in try body(database, start, to) }
        }
        return try result.get()
    }

    /// Runs `body` under the lock, then hands what it collected to `report` with the lock released.
    private func locked<Value: Sendable>(_ body: (inout HistoryState, inout [String]) -> Value) -> Value {
        let (value, reports) = state.withLock { state -> (Value, [String]) in
            var reports: [String] = []
            let value = body(&state, &reports)
            return (value, reports)
        }
        reports.forEach(report)
        return value
    }
}
