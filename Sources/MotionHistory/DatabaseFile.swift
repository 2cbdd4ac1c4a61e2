#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File operations on a history database and its WAL companions (`-wal`, `-shm`).
enum DatabaseFile {
    /// SQLite keeps these next to the database in WAL mode; they belong to it and move with it.
    static let companions = ["-wal", "-shm"]

    /// Renames `path` and its companions to `<path>.<reason>-<UTC timestamp>` (plus `-wal`/`-shm`), so a
    /// new database can be created at `path` while the old data stays for inspection or repair.
    ///
    /// - Returns: the new name of the database file, or the failure in words.
    static func moveAside(_ path: String, reason: String, now: Double) -> Result<String, MoveAsideFailure> {
        let base = "\(path).\(reason)-\(utcStamp(now))"
        var target = base
        var attempt = 1
        // Two recoveries within one second must not overwrite the first file moved aside.
        while exists(target) {
            attempt += 1
            target = "\(base)-\(attempt)"
        }
        if rename(path, target) != 0, errno != ENOENT {
            return .failure(MoveAsideFailure(path: path, target: target, reason: String(cString: strerror(errno))))
        }
        for suffix in companions where exists(path + suffix) {
            if rename(path + suffix, target + suffix) != 0 {
                return .failure(
                    MoveAsideFailure(
                        path: path + suffix,
                        target: target + suffix,
                        reason: String(cString: strerror(errno))
                    )
                )
            }
        }
        return .success(target)
    }

    struct MoveAsideFailure: Error, CustomStringConvertible {
        var path: String
        var target: String
        var reason: String
        var description: String { "renaming \(path) to \(target) failed: \(reason)" }
    }

    static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// `20261121T061500Z` for a Unix time in seconds.
    static func utcStamp(_ unixSeconds: Double) -> String {
        var seconds = time_t(unixSeconds.isFinite ? unixSeconds.rounded(.down) : 0)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return "\(parts.tm_year + 1900)\(pad(parts.tm_mon + 1))\(pad(parts.tm_mday))T"
            + "\(pad(parts.tm_hour))\(pad(parts.tm_min))\(pad(parts.tm_sec))Z"
    }

    private static func pad(_ value: Int32) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    /// The wall clock, Unix seconds.
    static func wallClock() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
