import AgentPorts

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The state directory on the local file system (`StateDirectory`): atomic, durable replacements through
/// `AtomicFile`, bounded reads that do not follow a final symbolic link, and the durable outbox's segment
/// folder. Sub-folders (`desired/`, `outbox/`) are created with mode 0700 when first written.
package final class StateFiles: StateDirectory {
    package let path: String

    package init(path: String) {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        self.path = p
    }

    package func location(of file: StateFile) -> String { path + "/" + file.relativePath }

    package func read(_ file: StateFile) throws(StateFileError) -> [UInt8]? {
        try AtomicFile.read(location(of: file), limit: StateFile.maximumBytes)
    }

    package func replace(_ file: StateFile, with bytes: [UInt8]) throws(StateFileError) {
        try makeFolder(of: file)
        try AtomicFile.write(bytes, to: location(of: file), mode: 0o600)
    }

    package func remove(_ file: StateFile) throws(StateFileError) {
        let target = location(of: file)
        guard unlink(target) == 0 || errno == ENOENT else {
            throw StateFileError("cannot remove \(target): \(String(cString: strerror(errno))) — check agent.state_dir")
        }
    }

    package func segmentStorage() throws(StateFileError) -> any SegmentStorage {
        try SegmentFiles(folder: location(of: .durableOutbox))
    }

    private func makeFolder(of file: StateFile) throws(StateFileError) {
        // The directory itself, with its missing parents (agent.state_dir may name a new path).
        var folder = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            folder += "/" + part
            try Self.makeDirectory(folder)
        }
        for part in file.relativePath.split(separator: "/").dropLast() {
            folder += "/" + part
            try Self.makeDirectory(folder)
        }
    }

    static func makeDirectory(_ folder: String) throws(StateFileError) {
        guard mkdir(folder, 0o700) == 0 || errno == EEXIST else {
            throw StateFileError(
                "cannot create \(folder): \(String(cString: strerror(errno))) — set agent.state_dir in config.yaml to a directory the agent's user can write"
            )
        }
    }
}
