import AgentPorts
import Foundation
import Platform
import Testing

/// `AtomicFile`: the new content replaces the old whole, nothing is left behind, and a failed write leaves the
/// old file as it was (the full-disk case runs end to end in DiskFullEndToEndTests, on a real tmpfs).
@Suite struct AtomicFileTests {
    static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "atomic-file-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func replacesTheFileWholeAndLeavesNoTemporaryFile() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        try AtomicFile.write(Array(#"{"version": 1}"#.utf8), to: path)
        try AtomicFile.write(Array(#"{"version": 2, "streams": {}}"#.utf8), to: path)
        #expect(FileManager.default.contents(atPath: path) == Data(#"{"version": 2, "streams": {}}"#.utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["state.json"])
    }

    @Test func aFailedWriteKeepsThePreviousContentAndSaysSo() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        try AtomicFile.write(Array("old".utf8), to: path)
        // The rename target is a non-empty directory: every step before the rename succeeds, the rename fails.
        let blocked = dir + "/blocked"
        try FileManager.default.createDirectory(atPath: blocked + "/inside", withIntermediateDirectories: true)
        #expect {
            try AtomicFile.write(Array("new".utf8), to: blocked)
        } throws: { error in
            "\(error)".contains("keeps its previous content")
        }
        #expect(FileManager.default.contents(atPath: path) == Data("old".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["blocked", "state.json"])
    }
}
