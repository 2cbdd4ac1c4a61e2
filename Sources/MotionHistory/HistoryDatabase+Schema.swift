internal import CSQLite

extension HistoryDatabase {
    /// The schema, one migration per version: `PRAGMA user_version` counts the migrations applied, so a
    /// database written by an older agent is brought forward in one transaction at open. Append new
    /// migrations; never edit a shipped one.
    static let migrations: [String] = [
        // Version 1. Times are Unix seconds (REAL); increments are REAL so interpolated shares stay exact.
        """
        CREATE TABLE pedometer_interval (
            session_id TEXT NOT NULL,
            start_time REAL NOT NULL,
            end_time REAL NOT NULL,
            steps REAL NOT NULL,
            distance REAL,
            floors_ascended REAL,
            floors_descended REAL,
            active_time REAL NOT NULL,
            -- The session's cumulative counters at end_time: the base of the next snapshot's increments,
            -- also after the store is reopened.
            total_steps INTEGER NOT NULL,
            total_distance REAL,
            total_floors_ascended INTEGER,
            total_floors_descended INTEGER,
            total_active_time REAL NOT NULL
        );
        CREATE INDEX pedometer_interval_end ON pedometer_interval(end_time);
        CREATE INDEX pedometer_interval_session ON pedometer_interval(session_id);
        CREATE TABLE activity_segment (
            start_time REAL NOT NULL PRIMARY KEY,
            stationary INTEGER NOT NULL,
            walking INTEGER NOT NULL,
            running INTEGER NOT NULL,
            automotive INTEGER NOT NULL,
            cycling INTEGER NOT NULL,
            unknown INTEGER NOT NULL,
            confidence TEXT NOT NULL
        );
        """
    ]

    static var schemaVersion: Int { migrations.count }

    /// Brings the schema to `schemaVersion`, or throws `NewerSchema` for a file from a newer agent.
    static func migrate(_ connection: SQLiteConnection) throws {
        guard let text = try connection.text("PRAGMA user_version", operation: "read the schema version"),
            let version = Int(text)
        else {
            throw SQLiteError(operation: "read the schema version", code: SQLITE_ERROR, message: "no version returned")
        }
        if version == schemaVersion { return }
        guard version < schemaVersion else {
            throw NewerSchema(found: version, supported: schemaVersion)
        }
        try connection.execute("BEGIN IMMEDIATE", operation: "begin the schema migration")
        do {
            for migration in migrations[version...] {
                try connection.execute(migration, operation: "migrate the schema")
            }
            try connection.execute("PRAGMA user_version = \(schemaVersion)", operation: "set the schema version")
            try connection.execute("COMMIT", operation: "commit the schema migration")
        } catch {
            try? connection.execute("ROLLBACK", operation: "roll back the schema migration")
            throw error
        }
    }

    /// A database whose `user_version` is above what this agent knows: written by a newer agent.
    struct NewerSchema: Error, CustomStringConvertible {
        var found: Int
        var supported: Int
        var description: String {
            "its schema version \(found) is newer than this agent's \(supported)"
        }
    }
}
