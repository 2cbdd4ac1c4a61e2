import Foundation
import MotionModel
import Testing

@testable import MotionHistory

@Suite struct RecoveryTests {
    private func write(_ bytes: [UInt8], to path: String, at offset: UInt64? = nil) throws {
        if let offset {
            let handle = try #require(FileHandle(forUpdatingAtPath: path))
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: Data(bytes))
            try handle.close()
        } else {
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        }
    }

    private func expectWorks(_ store: HistoryStore) throws {
        store.recordPedometer(PedometerSnapshot(sessionID: "new", time: 5_000, numberOfSteps: 0))
        store.recordPedometer(PedometerSnapshot(sessionID: "new", time: 5_010, numberOfSteps: 7))
        #expect(try store.queryPedometerData(from: 4_000, to: 6_000).numberOfSteps == 7)
    }

    @Test func garbageFileIsMovedAsideAndReplaced() throws {
        let fixture = HistoryFixture()
        let garbage = Array(repeating: Array("this is not a database\n".utf8), count: 200).flatMap { $0 }
        try write(garbage, to: fixture.path)
        try write(Array("stale wal".utf8), to: fixture.path + "-wal")

        let store = try fixture.open()
        let moved = fixture.files(startingWith: "history.sqlite.corrupt-")
        // The file and its companions (SQLite made a -shm while finding out), nothing else.
        #expect(moved.count == 3)
        let aside = try #require(moved.first)
        #expect(moved == [aside, aside + "-shm", aside + "-wal"])
        // The garbage and the WAL are kept, untouched, for whoever wants to look at them.
        #expect(FileManager.default.contents(atPath: fixture.directory + "/" + aside) == Data(garbage))
        #expect(
            FileManager.default.contents(atPath: fixture.directory + "/" + aside + "-wal") == Data("stale wal".utf8)
        )
        let reports = fixture.reports.all
        #expect(reports.count == 1)
        #expect(reports.first?.contains(fixture.path) == true)
        #expect(reports.first?.contains("moved it aside to") == true)
        #expect(reports.first?.contains("corrupt") == true)
        try expectWorks(store)
    }

    @Test func malformedDatabaseIsMovedAsideAndReplaced() throws {
        let fixture = HistoryFixture()
        do {
            let store = try fixture.open()
            for index in 0..<200 {
                store.recordPedometer(
                    PedometerSnapshot(sessionID: "old", time: Double(index) * 10, numberOfSteps: index * 10)
                )
            }
        }
        // Closing the last connection checkpoints the WAL into the file; now smash the pages after the first
        // (page size 4096 B), where the tables' b-trees live.
        let size = try #require(FileManager.default.attributesOfItem(atPath: fixture.path)[.size] as? UInt64)
        #expect(size > 3 * 4_096)
        try write(Array(repeating: 0xA5, count: Int(size) - 4_096), to: fixture.path, at: 4_096)

        let store = try fixture.open()
        #expect(
            fixture.files(startingWith: "history.sqlite.corrupt-").filter {
                !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal")
            }.count == 1
        )
        #expect(fixture.reports.all.contains { $0.contains(fixture.path) && $0.contains("started a new one") })
        #expect(try store.queryPedometerData(from: 0, to: 10_000).numberOfSteps == 0)
        try expectWorks(store)
    }

    @Test func databaseFromANewerAgentIsMovedAside() throws {
        let fixture = HistoryFixture()
        do {
            let connection = try SQLiteConnection(path: fixture.path)
            try connection.execute("PRAGMA user_version = 99", operation: "pretend to be a newer agent")
        }
        let store = try fixture.open()
        #expect(
            fixture.files(startingWith: "history.sqlite.newer-").filter {
                !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal")
            }.count == 1
        )
        #expect(fixture.reports.all.contains { $0.contains("written by a newer agent") })
        try expectWorks(store)
    }

    @Test func fullDatabaseIsReportedMovedAsideAndRecordingGoesOn() throws {
        let fixture = HistoryFixture()
        // Eight 4096 B pages: the schema takes six, so a few hundred rows fill it.
        let store = try fixture.open(maxPageCount: 8)
        let session = String(repeating: "long session id ", count: 8)
        for index in 0..<400 {
            store.recordPedometer(PedometerSnapshot(sessionID: session, time: Double(index), numberOfSteps: index))
        }
        let reports = fixture.reports.all
        #expect(reports.contains { $0.contains(fixture.path) && $0.contains("was full") })
        #expect(!fixture.files(startingWith: "history.sqlite.full-").isEmpty)
        // The store still answers, and the newest rows are in the current file.
        let recent = try store.queryPedometerData(from: 398, to: 399)
        #expect(recent.numberOfSteps == 1)
        try expectWorks(store)
    }

    @Test func fullDatabaseThatTookNoWriteIsNotMovedAgain() throws {
        let fixture = HistoryFixture()
        // Too small for even one row beyond the schema: every write fails with SQLITE_FULL.
        let store = try fixture.open(maxPageCount: 6)
        let session = String(repeating: "x", count: 5_000)
        for index in 0..<5 {
            store.recordPedometer(PedometerSnapshot(sessionID: session, time: Double(index), numberOfSteps: index))
        }
        #expect(fixture.files(startingWith: "history.sqlite.full-").isEmpty)
        let reports = fixture.reports.all
        // Reported once, not once per dropped write.
        #expect(reports.count == 1)
        #expect(reports.first?.contains("free disk space") == true)
        // A write that fits afterwards says the store works again.
        store.recordActivity(MotionActivity(startDate: 0, walking: true), at: 10)
        #expect(fixture.reports.all.last?.contains("works again") == true)
        #expect(try store.queryActivityStarting(from: 0, to: 20).count == 1)
    }

    @Test func missingDirectoryThrowsASentenceNamingTheFile() {
        let path = "/nonexistent-motion-history-dir/history.sqlite"
        do {
            _ = try HistoryStore(path: path, now: 0, report: { _ in })
            Issue.record("expected cannotOpen")
        } catch {
            #expect(error.code == .cannotOpen)
            #expect(error.description.contains(path))
            #expect(error.description.contains("agent.state_dir"))
        }
    }
}
