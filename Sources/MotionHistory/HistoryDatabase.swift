internal import CSQLite
import MotionModel

/// One open history file: its connection, its prepared statements and the few values cached between calls.
///
/// Every method throws the underlying `SQLiteError` (or `NewerSchema` at open); `HistoryStore` decides
/// what a failure means (report, move the file aside, recreate). Used under `HistoryStore`'s lock only.
final class HistoryDatabase {
    let connection: SQLiteConnection
    /// Whether a write has committed since this file was opened: a full database that took no write at all
    /// is not worth moving aside again.
    private(set) var hasWritten = false

    private let insertInterval: SQLiteStatement
    private let lastIntervalOfSession: SQLiteStatement
    private let intervalsOverlapping: SQLiteStatement
    private let insertSegment: SQLiteStatement
    private let updateSegmentConfidence: SQLiteStatement
    private let lastSegmentRecorded: SQLiteStatement
    private let segmentsStarting: SQLiteStatement
    private let deleteIntervals: SQLiteStatement
    private let deleteSegments: SQLiteStatement

    /// The last snapshot recorded, so the next one of the same session needs no read.
    private var lastSnapshot: PedometerSnapshot?
    /// The segment in progress (the last one recorded), read at open so a restart continues it.
    private(set) var lastSegment: MotionActivity?

    /// Opens (creating if missing) and checks the file, sets WAL and synchronous=NORMAL, migrates the schema
    /// and prepares the statements.
    ///
    /// - Parameter maxPageCount: caps the file at this many pages (`PRAGMA max_page_count`), for tests
    ///   that need SQLITE_FULL without filling a disk.
    init(path: String, maxPageCount: Int? = nil) throws {
        let connection = try SQLiteConnection(path: path)
        self.connection = connection
        do {
            // A file that is not a database fails here with SQLITE_NOTADB; damaged pages show up as lines other
            // than "ok". quick_check is O(file size) without checking index contents: seconds at most on a week.
            let check = try connection.texts("PRAGMA quick_check", operation: "check the database")
            guard check == ["ok"] else {
                throw SQLiteError(
                    operation: "check the database",
                    code: SQLITE_CORRUPT,
                    message: "quick_check reported " + check.prefix(3).joined(separator: "; ")
                )
            }
            // WAL: a crash or power cut loses at most the last commits, never the file; NORMAL is durable
            // enough in WAL mode (sqlite.org/pragma.html#pragma_synchronous) and avoids an fsync per write.
            let mode = try connection.text("PRAGMA journal_mode=WAL", operation: "set WAL journal mode")
            if mode?.lowercased() != "wal" {
                throw SQLiteError(
                    operation: "set WAL journal mode",
                    code: SQLITE_ERROR,
                    message: "SQLite kept journal mode \(mode ?? "unknown")"
                )
            }
            try connection.execute("PRAGMA synchronous=NORMAL", operation: "set synchronous=NORMAL")
            // The history gains a row a minute and is queried rarely: a 256 KiB page cache instead of SQLite's
            // 2 MiB default keeps the agent's resident memory small on the device.
            try connection.execute("PRAGMA cache_size=-256", operation: "limit the page cache")
            if let maxPageCount {
                _ = try connection.text("PRAGMA max_page_count=\(maxPageCount)", operation: "limit the page count")
            }
            try Self.migrate(connection)

            insertInterval = try connection.prepare(
                """
                INSERT INTO pedometer_interval (session_id, start_time, end_time, steps, distance, floors_ascended,
                    floors_descended, active_time, total_steps, total_distance, total_floors_ascended,
                    total_floors_descended, total_active_time)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                """,
                operation: "store a pedometer interval"
            )
            lastIntervalOfSession = try connection.prepare(
                """
                SELECT end_time, total_steps, total_distance, total_floors_ascended, total_floors_descended,
                    total_active_time
                FROM pedometer_interval WHERE session_id = ?1 ORDER BY rowid DESC LIMIT 1
                """,
                operation: "read the session's last pedometer snapshot"
            )
            intervalsOverlapping = try connection.prepare(
                """
                SELECT start_time, end_time, steps, distance, floors_ascended, floors_descended, active_time
                FROM pedometer_interval WHERE end_time >= ?1 AND start_time <= ?2
                """,
                operation: "read pedometer history"
            )
            insertSegment = try connection.prepare(
                """
                INSERT OR REPLACE INTO activity_segment
                    (start_time, stationary, walking, running, automotive, cycling, unknown, confidence)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                """,
                operation: "store an activity segment"
            )
            updateSegmentConfidence = try connection.prepare(
                "UPDATE activity_segment SET confidence = ?2 WHERE start_time = ?1",
                operation: "raise an activity segment's confidence"
            )
            lastSegmentRecorded = try connection.prepare(
                """
                SELECT start_time, stationary, walking, running, automotive, cycling, unknown, confidence
                FROM activity_segment ORDER BY rowid DESC LIMIT 1
                """,
                operation: "read the last activity segment"
            )
            segmentsStarting = try connection.prepare(
                """
                SELECT start_time, stationary, walking, running, automotive, cycling, unknown, confidence
                FROM activity_segment WHERE start_time >= ?1 AND start_time <= ?2 ORDER BY start_time LIMIT ?3
                """,
                operation: "read activity history"
            )
            deleteIntervals = try connection.prepare(
                "DELETE FROM pedometer_interval WHERE end_time < ?1",
                operation: "delete old pedometer history"
            )
            deleteSegments = try connection.prepare(
                "DELETE FROM activity_segment WHERE start_time < ?1",
                operation: "delete old activity history"
            )

            lastSegmentRecorded.reset()
            if try lastSegmentRecorded.step() {
                lastSegment = Self.activity(from: lastSegmentRecorded)
            }
            lastSegmentRecorded.reset()
        } catch {
            // A file that fails at open is moved aside as it is: SQLite must not checkpoint or delete its WAL.
            connection.keepWALOnClose()
            throw error
        }
    }

    // MARK: Pedometer

    func record(_ snapshot: PedometerSnapshot) throws(SQLiteError) {
        let previous = try previousSnapshot(of: snapshot.sessionID)
        let interval = PedometerInterval(from: previous, to: snapshot)
        let statement = insertInterval
        statement.reset()
        defer { statement.reset() }
        try statement.bind(snapshot.sessionID, at: 1)
        try statement.bind(interval.start, at: 2)
        try statement.bind(interval.end, at: 3)
        try statement.bind(interval.steps, at: 4)
        try statement.bind(interval.distance, at: 5)
        try statement.bind(interval.floorsAscended, at: 6)
        try statement.bind(interval.floorsDescended, at: 7)
        try statement.bind(interval.activeTime, at: 8)
        try statement.bind(Int64(snapshot.numberOfSteps), at: 9)
        try statement.bind(snapshot.distance, at: 10)
        try statement.bind(snapshot.floorsAscended.map(Double.init), at: 11)
        try statement.bind(snapshot.floorsDescended.map(Double.init), at: 12)
        try statement.bind(snapshot.activeTime, at: 13)
        try statement.run()
        lastSnapshot = snapshot
        hasWritten = true
    }

    private func previousSnapshot(of session: String) throws(SQLiteError) -> PedometerSnapshot? {
        if let lastSnapshot, lastSnapshot.sessionID == session { return lastSnapshot }
        let statement = lastIntervalOfSession
        statement.reset()
        defer { statement.reset() }
        try statement.bind(session, at: 1)
        guard try statement.step() else { return nil }
        return PedometerSnapshot(
            sessionID: session,
            time: statement.double(0),
            numberOfSteps: Int(statement.int64(1)),
            distance: statement.optionalDouble(2),
            floorsAscended: statement.optionalDouble(3).map { Int($0) },
            floorsDescended: statement.optionalDouble(4).map { Int($0) },
            activeTime: statement.double(5)
        )
    }

    /// The stored intervals that overlap `[from, to]` (touching counts; `PedometerTotals` weighs them).
    func intervals(from: Double, to: Double) throws(SQLiteError) -> [PedometerInterval] {
        let statement = intervalsOverlapping
        statement.reset()
        defer { statement.reset() }
        try statement.bind(from, at: 1)
        try statement.bind(to, at: 2)
        var rows: [PedometerInterval] = []
        while try statement.step() {
            rows.append(
                PedometerInterval(
                    start: statement.double(0),
                    end: statement.double(1),
                    steps: statement.double(2),
                    distance: statement.optionalDouble(3),
                    floorsAscended: statement.optionalDouble(4),
                    floorsDescended: statement.optionalDouble(5),
                    activeTime: statement.double(6)
                )
            )
        }
        return rows
    }

    // MARK: Activity

    /// Starts a segment at `wallTime` when the flags differ from the segment in progress; otherwise raises
    /// that segment's confidence if this report is more confident.
    func record(_ activity: MotionActivity, at wallTime: Double) throws(SQLiteError) {
        if let current = lastSegment, current.hasSameFlags(as: activity) {
            guard activity.confidence > current.confidence else { return }
            let statement = updateSegmentConfidence
            statement.reset()
            defer { statement.reset() }
            try statement.bind(current.startDate, at: 1)
            try statement.bind(activity.confidence.rawValue, at: 2)
            try statement.run()
            lastSegment?.confidence = activity.confidence
            hasWritten = true
            return
        }
        var segment = activity
        segment.startDate = wallTime
        let statement = insertSegment
        statement.reset()
        defer { statement.reset() }
        try statement.bind(wallTime, at: 1)
        try statement.bind(Int64(segment.stationary ? 1 : 0), at: 2)
        try statement.bind(Int64(segment.walking ? 1 : 0), at: 3)
        try statement.bind(Int64(segment.running ? 1 : 0), at: 4)
        try statement.bind(Int64(segment.automotive ? 1 : 0), at: 5)
        try statement.bind(Int64(segment.cycling ? 1 : 0), at: 6)
        try statement.bind(Int64(segment.unknown ? 1 : 0), at: 7)
        try statement.bind(segment.confidence.rawValue, at: 8)
        try statement.run()
        lastSegment = segment
        hasWritten = true
    }

    /// The segments that start in `[from, to]`, oldest first, at most `limit` of them.
    func segments(from: Double, to: Double, limit: Int) throws(SQLiteError) -> [MotionActivity] {
        let statement = segmentsStarting
        statement.reset()
        defer { statement.reset() }
        try statement.bind(from, at: 1)
        try statement.bind(to, at: 2)
        try statement.bind(Int64(limit), at: 3)
        var rows: [MotionActivity] = []
        while try statement.step() {
            rows.append(Self.activity(from: statement))
        }
        return rows
    }

    private static func activity(from statement: SQLiteStatement) -> MotionActivity {
        MotionActivity(
            startDate: statement.double(0),
            stationary: statement.int64(1) != 0,
            walking: statement.int64(2) != 0,
            running: statement.int64(3) != 0,
            automotive: statement.int64(4) != 0,
            cycling: statement.int64(5) != 0,
            unknown: statement.int64(6) != 0,
            // A confidence this agent does not know (written by a newer one) reads as the weakest.
            confidence: statement.text(7).flatMap(MotionActivity.Confidence.init(rawValue:)) ?? .low
        )
    }

    // MARK: Retention

    /// Deletes pedometer intervals that ended, and activity segments that started, before `cutoff` (Unix s).
    func delete(before cutoff: Double) throws(SQLiteError) {
        for statement in [deleteIntervals, deleteSegments] {
            statement.reset()
            defer { statement.reset() }
            try statement.bind(cutoff, at: 1)
            try statement.run()
        }
    }
}
