internal import CSQLite

/// Step and activity history kept on the device; the only importer of SQLite.
enum SQLiteLibrary {
    static var version: String { String(cString: sqlite3_libversion()) }
}
