import Foundation
import Synchronization

@testable import MotionHistory

/// A fresh temporary directory per test, removed when the fixture goes away, and a report collector.
final class HistoryFixture {
    let directory: String
    let reports = ReportLog()

    init() {
        // mkdtemp replaces the trailing six X with a unique suffix.
        let template = NSTemporaryDirectory() + "motion-history-" + String(repeating: "X", count: 6)
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { fatalError("mkdtemp failed: errno \(errno)") }
        directory = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    var path: String { directory + "/history.sqlite" }

    func open(
        retentionDays: Int = 7,
        now: Double = 1_000,
        maxPageCount: Int? = nil
    ) throws -> HistoryStore {
        let reports = self.reports
        return try HistoryStore(
            path: path,
            retentionDays: retentionDays,
            now: now,
            maxPageCount: maxPageCount,
            report: { reports.append($0) }
        )
    }

    /// Files in the directory whose names start with `prefix`.
    func files(startingWith prefix: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix(prefix) }.sorted()
    }
}

/// Collects what a store reports.
final class ReportLog: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var all: [String] { lines.withLock { $0 } }
}
