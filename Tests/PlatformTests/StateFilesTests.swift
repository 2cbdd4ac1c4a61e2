import AgentPorts
import Foundation
import Platform
import Testing

/// The state directory's discipline: files replaced whole, never through a planted symbolic link, reads
/// bounded, and a boot counter that a planted value cannot make trap.
@Suite struct StateFilesTests {
    static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "state-files-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func replacesReadsAndRemovesByLayoutNameCreatingFolders() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = StateFiles(path: dir + "/new/state")
        #expect(try state.read(.commandOverrides) == nil)
        try state.replace(.commandOverrides, with: Array("{}".utf8))
        #expect(try state.read(.commandOverrides) == Array("{}".utf8))
        #expect(state.location(of: .commandOverrides) == dir + "/new/state/desired/overrides.json")
        try state.remove(.commandOverrides)
        try state.remove(.commandOverrides)
        #expect(try state.read(.commandOverrides) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/new/state/desired") == [])
    }

    @Test func aPlantedSymbolicLinkIsNeitherFollowedToReadNorWrittenThrough() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = dir + "/victim"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        let state = StateFiles(path: dir + "/state")
        try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: state.location(of: .health), withDestinationPath: victim)
        #expect(throws: StateFileError.self) { try state.read(.health) }
        // The replacement renames a fresh file over the link: the link goes, the file it pointed at stays.
        try state.replace(.health, with: Array("{}".utf8))
        #expect(FileManager.default.contents(atPath: victim) == Data("precious".utf8))
        #expect(try state.read(.health) == Array("{}".utf8))
        // The old fixed temporary name is not used: a link planted there changes nothing.
        try FileManager.default.createSymbolicLink(
            atPath: state.location(of: .health) + ".tmp",
            withDestinationPath: victim
        )
        try state.replace(.health, with: Array("{\"a\":1}".utf8))
        #expect(FileManager.default.contents(atPath: victim) == Data("precious".utf8))
    }

    @Test func anOversizedFileIsRefusedNotRead() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = StateFiles(path: dir)
        try Data(count: StateFile.maximumBytes + 1).write(to: URL(fileURLWithPath: state.location(of: .health)))
        #expect {
            try state.read(.health)
        } throws: { error in
            "\(error)".contains("is not the agent's file")
        }
    }

    @Test(arguments: ["18446744073709551615", "9007199254740993", "garbage", ""])
    func aBootCounterBeyondAnyRealCountStartsOver(planted: String) throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = StateFiles(path: dir)
        try state.replace(.bootCount, with: Array("\(planted)\n".utf8))
        #expect(try BootCounter.increment(in: state) == 1)
        #expect(try BootCounter.increment(in: state) == 2)
    }

    @Test func theBootCounterCountsOnFromWhatItKept() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = StateFiles(path: dir)
        try state.replace(.bootCount, with: Array("41\n".utf8))
        #expect(try BootCounter.increment(in: state) == 42)
        #expect(try state.read(.bootCount) == Array("42\n".utf8))
    }
}
