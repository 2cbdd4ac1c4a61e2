internal import CSQLite

/// A failed SQLite call: the operation, SQLite's result code and its message (`sqlite3_errmsg`).
///
/// Internal: `HistoryStore` turns these into reports and `HistoryError`s that name the file and the fix.
struct SQLiteError: Error, CustomStringConvertible {
    /// What we were doing, e.g. "insert a pedometer interval".
    var operation: String
    /// SQLite's primary or extended result code (`SQLITE_*`).
    var code: Int32
    /// SQLite's own text for the failure.
    var message: String

    var description: String { "\(operation) failed: \(message) (SQLite code \(code))" }

    /// SQLITE_CORRUPT or SQLITE_NOTADB: the file cannot be trusted, whatever the extended code says.
    var isCorruption: Bool {
        let primary = code & 0xFF
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }

    /// SQLITE_FULL: the disk, or the database's page limit, is full.
    var isFull: Bool { code & 0xFF == SQLITE_FULL }
}
