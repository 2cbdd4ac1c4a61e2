internal import CSQLite

/// Owns one `sqlite3_stmt *`, prepared once and reused: `reset()`, bind, `step()` until it returns false.
///
/// sqlite3.h, sqlite3_finalize: "The application must finalize every prepared statement in order to avoid
/// resource leaks." A successful `init` is paired with exactly one `sqlite3_finalize` in `deinit`; the
/// statement keeps its connection alive so the handle it was prepared on outlives it.
final class SQLiteStatement {
    let pointer: OpaquePointer
    let connection: SQLiteConnection
    let operation: String

    /// SQLITE_TRANSIENT: SQLite copies bound text before the bind call returns, so Swift's temporary C
    /// string may go away.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(connection: SQLiteConnection, sql: String, operation: String) throws(SQLiteError) {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v2(connection.pointer, sql, -1, &handle, nil)
        guard code == SQLITE_OK, let handle else {
            // sqlite3_prepare_v2 sets *ppStmt to NULL on error; finalizing NULL is a harmless no-op.
            sqlite3_finalize(handle)
            throw SQLiteError(operation: operation, code: code, message: connection.lastMessage)
        }
        pointer = handle
        self.connection = connection
        self.operation = operation
    }

    deinit {
        sqlite3_finalize(pointer)
    }

    /// Readies the statement for another run and clears the previous bindings.
    func reset() {
        // sqlite3_reset repeats the last step's error, which `step` has already thrown.
        sqlite3_reset(pointer)
        sqlite3_clear_bindings(pointer)
    }

    func bind(_ value: Double, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_double(pointer, index, value))
    }

    func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(pointer, index, value))
    }

    func bind(_ value: String, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_text(pointer, index, value, -1, Self.transient))
    }

    func bind(_ value: Double?, at index: Int32) throws(SQLiteError) {
        if let value { try bind(value, at: index) } else { try check(sqlite3_bind_null(pointer, index)) }
    }

    /// Runs one step: true when a row is ready to read, false when the statement is done.
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(pointer)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteError(operation: operation, code: code, message: connection.lastMessage)
        }
    }

    /// Steps a statement that returns no rows.
    func run() throws(SQLiteError) {
        while try step() {}
    }

    func double(_ column: Int32) -> Double { sqlite3_column_double(pointer, column) }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(pointer, column) }

    func optionalDouble(_ column: Int32) -> Double? {
        sqlite3_column_type(pointer, column) == SQLITE_NULL ? nil : sqlite3_column_double(pointer, column)
    }

    func text(_ column: Int32) -> String? {
        // sqlite3_column_text: the pointer is valid until the next step, reset or finalize; copy it now.
        guard let bytes = sqlite3_column_text(pointer, column) else { return nil }
        return String(cString: bytes)
    }

    private func check(_ code: Int32) throws(SQLiteError) {
        guard code == SQLITE_OK else {
            throw SQLiteError(operation: operation, code: code, message: connection.lastMessage)
        }
    }
}
