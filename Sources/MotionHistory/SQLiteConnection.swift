internal import CSQLite

/// Owns one `sqlite3 *` database connection.
///
/// sqlite3.h, sqlite3_open_v2: "Whether or not an error occurs when it is opened, resources associated with
/// the database connection handle should be released by passing it to sqlite3_close() when it is no longer
/// required." So `init` closes the handle itself when opening fails, and a successful `init` is paired with
/// exactly one `sqlite3_close_v2` in `deinit`. sqlite3_close_v2: "If sqlite3_close_v2() is called with
/// unfinalized prepared statements [...] the database connection becomes an unusable 'zombie' which will
/// automatically be deallocated when the last prepared statement is finalized" — so the order in which a
/// connection and its `SQLiteStatement`s are released does not matter (each statement also keeps its
/// connection alive).
///
/// Not Sendable: `HistoryStore` uses one connection from one thread at a time, under its lock.
final class SQLiteConnection {
    let pointer: OpaquePointer
    let path: String

    init(path: String) throws(SQLiteError) {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            throw SQLiteError(operation: "open \(path)", code: code, message: message)
        }
        pointer = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        // Another process (a person with the sqlite3 shell) may hold a lock briefly; wait rather than fail.
        sqlite3_busy_timeout(handle, 1000)  // ms
    }

    deinit {
        sqlite3_close_v2(pointer)
    }

    /// SQLite's message for the last failed call on this connection.
    var lastMessage: String { String(cString: sqlite3_errmsg(pointer)) }

    /// Keeps the `-wal` and `-shm` files when this connection closes.
    ///
    /// The last connection to close normally checkpoints the WAL into the database and deletes it; a file
    /// about to be moved aside as corrupt should keep its WAL as it was, for whoever inspects it
    /// (sqlite3.h, SQLITE_FCNTL_PERSIST_WAL).
    func keepWALOnClose() {
        var on: Int32 = 1
        _ = sqlite3_file_control(pointer, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
    }

    /// Runs statements that return no rows we need (schema, pragmas that set, transactions).
    func execute(_ sql: String, operation: String) throws(SQLiteError) {
        var errorText: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(pointer, sql, nil, nil, &errorText)
        guard code == SQLITE_OK else {
            // sqlite3_exec: "To avoid memory leaks, the application should invoke sqlite3_free() on error
            // message strings returned through the 5th parameter".
            let message = errorText.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(errorText)
            throw SQLiteError(operation: operation, code: code, message: message)
        }
    }

    func prepare(_ sql: String, operation: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql, operation: operation)
    }

    /// Runs `sql` and returns the first column of its first row as text (`PRAGMA journal_mode=WAL` → "wal").
    func text(_ sql: String, operation: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql, operation: operation)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// The rows' first column as text, e.g. the lines of `PRAGMA quick_check`.
    func texts(_ sql: String, operation: String) throws(SQLiteError) -> [String] {
        let statement = try prepare(sql, operation: operation)
        var lines: [String] = []
        while try statement.step() {
            lines.append(statement.text(0) ?? "")
        }
        return lines
    }
}
