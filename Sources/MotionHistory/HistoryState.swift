import MotionModel

/// What `HistoryStore` guards with its lock: the open database and the bookkeeping of retention and
/// failures. Every method collects what should be reported in `reports`; the store hands them to its
/// `report` closure after unlocking, so a closure that logs slowly never holds up the lock.
struct HistoryState {
    let path: String
    let retentionDays: Int
    let maxPageCount: Int?
    /// nil after a failure that left no usable file; the next call tries to open again.
    var database: HistoryDatabase?
    /// Unix s before which rows have been deleted; queries ending earlier are refused.
    var retainedSince = -Double.infinity
    /// When `prune` last ran, Unix s (by the caller's clock).
    var lastPrune = -Double.infinity
    /// The last failure reported, so a failing write every 10 s is reported once, not every time.
    var failure: String?
    var failuresSinceReport = 0

    init(path: String, retentionDays: Int, maxPageCount: Int?) {
        self.path = path
        self.retentionDays = retentionDays
        self.maxPageCount = maxPageCount
    }

    // MARK: Opening and recovery

    /// The open database, opening (and if need be moving a bad file aside and recreating) it first.
    mutating func openDatabase(reports: inout [String]) -> Result<HistoryDatabase, HistoryError> {
        if let database { return .success(database) }
        do {
            let opened = try HistoryDatabase(path: path, maxPageCount: maxPageCount)
            database = opened
            return .success(opened)
        } catch {
            guard let reason = Self.setAsideReason(error, duringOpen: true) else {
                let failure = HistoryError.cannotOpen(path: path, reason: "\(error)")
                note(failure: failure.description, reports: &reports)
                return .failure(failure)
            }
            guard setAside(reason: reason, cause: "\(error)", reports: &reports), let database else {
                let failure = HistoryError.cannotOpen(
                    path: path,
                    reason: "\(error), and moving it aside or creating a new one failed (reported)"
                )
                return .failure(failure)
            }
            return .success(database)
        }
    }

    /// Why a failure makes the file worth moving aside, as the word in the moved file's name; nil when
    /// moving it would not help (permissions, a missing directory, a disk full before anything was written).
    static func setAsideReason(_ error: any Error, duringOpen: Bool, hasWritten: Bool = false) -> SetAsideReason? {
        if error is HistoryDatabase.NewerSchema { return .newer }
        guard let error = error as? SQLiteError else { return nil }
        if error.isCorruption { return .corrupt }
        if error.isFull, !duringOpen, hasWritten { return .full }
        return nil
    }

    /// Why a file is moved aside; the raw value goes into the moved file's name.
    enum SetAsideReason: String {
        case corrupt
        case full
        case newer

        var explanation: String {
            switch self {
            case .corrupt: "corrupt"
            case .full: "full"
            case .newer: "written by a newer agent"
            }
        }

        func advice(moved: String) -> String {
            switch self {
            case .corrupt: "\(moved) keeps the earlier history for inspection (sqlite3 .recover); delete it when done"
            case .full: "free disk space on its volume, and delete \(moved) once its history is not needed"
            case .newer: "run the newer agent to read \(moved), or delete it"
            }
        }
    }

    /// Closes the database, renames the file (and its WAL companions) with `reason` and a timestamp, and
    /// creates a new one. Returns whether a new database is open.
    @discardableResult
    mutating func setAside(reason: SetAsideReason, cause: String, reports: inout [String]) -> Bool {
        // Close first, keeping the WAL as it is: the moved files should be what failed, for inspection.
        database?.connection.keepWALOnClose()
        database = nil
        let moved: String
        switch DatabaseFile.moveAside(path, reason: reason.rawValue, now: DatabaseFile.wallClock()) {
        case .success(let target):
            moved = target
        case .failure(let failure):
            note(
                failure:
                    "the history database \(path) is unusable (\(cause)) and could not be moved aside: \(failure) — history is off until it can be moved; check the permissions of its directory, or remove the file",
                reports: &reports
            )
            return false
        }
        do {
            database = try HistoryDatabase(path: path, maxPageCount: maxPageCount)
        } catch {
            note(
                failure:
                    "the history database \(path) was moved aside to \(moved) (\(cause)), but a new one could not be created: \(error) — check the directory is writable and the disk has space",
                reports: &reports
            )
            return false
        }
        reports.append(
            "the history database \(path) was \(reason.explanation) (\(cause)); moved it aside to \(moved) and started a new one — the agent goes on recording; \(reason.advice(moved: moved))"
        )
        failure = nil
        failuresSinceReport = 0
        return true
    }

    // MARK: Writes

    /// Runs a write; a failure is reported (once per kind) and the write dropped, a corrupt or full file is
    /// moved aside and the write tried once on the new file.
    mutating func write(
        _ operation: String,
        reports: inout [String],
        _ body: (HistoryDatabase) throws(SQLiteError) -> Void
    ) {
        guard case .success(let database) = openDatabase(reports: &reports) else { return }
        do {
            try body(database)
            noteSuccess(reports: &reports)
        } catch {
            guard let reason = Self.setAsideReason(error, duringOpen: false, hasWritten: database.hasWritten) else {
                note(
                    failure:
                        "\(operation) in the history database \(path) failed and was dropped: \(error) — \(Self.fix(for: error))",
                    reports: &reports
                )
                return
            }
            guard setAside(reason: reason, cause: "\(error)", reports: &reports), let fresh = self.database else {
                return
            }
            do {
                try body(fresh)
            } catch {
                note(
                    failure:
                        "\(operation) in the new history database \(path) failed and was dropped: \(error) — \(Self.fix(for: error))",
                    reports: &reports
                )
            }
        }
    }

    private static func fix(for error: SQLiteError) -> String {
        if error.isFull { return "free disk space on the history volume or lower pedometer.history_retention_days" }
        return "check the disk and the file's permissions; the agent keeps running and retries with the next record"
    }

    /// Reports a failure unless it repeats the last one reported.
    mutating func note(failure message: String, reports: inout [String]) {
        if message == failure {
            failuresSinceReport += 1
            return
        }
        if failuresSinceReport > 0 {
            reports.append("\(failuresSinceReport) more history failures like the last one were not reported")
        }
        reports.append(message)
        failure = message
        failuresSinceReport = 0
    }

    mutating func noteSuccess(reports: inout [String]) {
        guard failure != nil else { return }
        reports.append(
            "the history database \(path) works again (\(failuresSinceReport) more failures after the last report were not reported)"
        )
        failure = nil
        failuresSinceReport = 0
    }

    // MARK: Reads

    /// Runs a query; a corrupt file is reported, moved aside and recreated, and the query fails.
    mutating func read<Value>(
        reports: inout [String],
        _ body: (HistoryDatabase) throws(SQLiteError) -> Value
    ) -> Result<Value, HistoryError> {
        let database: HistoryDatabase
        switch openDatabase(reports: &reports) {
        case .success(let opened): database = opened
        case .failure(let error): return .failure(.queryFailed(path: path, reason: error.description))
        }
        do {
            return .success(try body(database))
        } catch {
            if let reason = Self.setAsideReason(error, duringOpen: false) {
                setAside(reason: reason, cause: "\(error)", reports: &reports)
            } else {
                note(failure: "a query on the history database \(path) failed: \(error)", reports: &reports)
            }
            return .failure(.queryFailed(path: path, reason: "\(error)"))
        }
    }

    // MARK: Retention

    /// Deletes rows older than the retention window before `now`, at most once per `interval` seconds of
    /// `now` (a clock that went backwards prunes at once).
    mutating func prune(now: Double, interval: Double, reports: inout [String]) {
        guard now - lastPrune >= interval || now < lastPrune else { return }
        lastPrune = now
        let cutoff = now - Double(retentionDays) * 86_400  // s per day
        var pruned = false
        write("delete history older than \(retentionDays) days", reports: &reports) { database throws(SQLiteError) in
            try database.delete(before: cutoff)
            pruned = true
        }
        if pruned { retainedSince = cutoff }
    }
}
