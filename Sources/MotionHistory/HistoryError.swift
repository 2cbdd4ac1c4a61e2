/// Why a history query or opening the history database failed, with a sentence that names the file or the
/// value and the fix.
package struct HistoryError: Error, CustomStringConvertible, Equatable, Sendable {
    package enum Code: String, Sendable, Equatable {
        /// `retentionDays` is not a positive whole number of days.
        case invalidRetention
        /// A query bound is NaN or infinite, or `from` is after `to`.
        case invalidInterval
        /// The whole query window is older than the retained history.
        case outsideRetention
        /// More results than one answer may carry: ask for a shorter interval.
        case tooManyResults
        /// The database file cannot be opened or created, even after moving a bad one aside.
        case cannotOpen
        /// The database failed while answering; it has been reported (and recreated if it was corrupt).
        case queryFailed
    }

    package var code: Code
    package var description: String

    package init(code: Code, description: String) {
        self.code = code
        self.description = description
    }

    static func invalidRetention(_ days: Int) -> HistoryError {
        HistoryError(
            code: .invalidRetention,
            description:
                "history retention of \(days) days is not allowed — set pedometer.history_retention_days in config.yaml to 1–365"
        )
    }

    static func invalidInterval(from: Double, to: Double) -> HistoryError {
        HistoryError(
            code: .invalidInterval,
            description:
                "history query from \(from) to \(to) is not a valid interval — give finite Unix times in seconds with from <= to"
        )
    }

    static func outsideRetention(from: Double, to: Double, retainedSince: Double, days: Int) -> HistoryError {
        HistoryError(
            code: .outsideRetention,
            description:
                "history query from \(from) to \(to) ends before the oldest retained data (\(retainedSince)); history keeps \(days) days — ask for a later interval or raise pedometer.history_retention_days in config.yaml"
        )
    }

    static func tooManyResults(
        from: Double,
        to: Double,
        limit: Int,
        lastIncluded: Double,
        nextStart: Double
    ) -> HistoryError {
        HistoryError(
            code: .tooManyResults,
            description:
                "more than \(limit) activity segments start between \(from) and \(to); one query returns at most \(limit) — ask for a shorter interval: from=\(from) to=\(lastIncluded) holds the first \(limit), and the next starts at \(nextStart)"
        )
    }

    static func cannotOpen(path: String, reason: String) -> HistoryError {
        HistoryError(
            code: .cannotOpen,
            description:
                "cannot open the history database \(path): \(reason) — check that its directory exists and is writable and the disk has space, or set agent.state_dir in config.yaml"
        )
    }

    static func queryFailed(path: String, reason: String) -> HistoryError {
        HistoryError(
            code: .queryFailed,
            description:
                "history query on \(path) failed: \(reason) — it has been reported; retry, and if it persists move the file aside so the agent starts a new one"
        )
    }
}
