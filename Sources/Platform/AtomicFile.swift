import AgentPorts

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Replaces a small file so that a reader — or the agent after a power cut — finds the old content or the new,
/// never a mix, a torn tail or an empty file: write a fresh temporary file beside it, fsync it, rename it over
/// the old one, fsync the directory (so the rename itself is on disk). Every step is checked; when one fails (a
/// full file system, above all) the temporary file goes and the old file stays as it was.
///
/// The temporary file gets an unpredictable name and is created with `O_EXCL | O_NOFOLLOW`: another local
/// user who can write the directory cannot make the agent (root, say) write through a symbolic link or into a
/// file they prepared. Foundation's `.atomic` writes rename without an fsync, which a power cut can turn into an
/// empty file.
package enum AtomicFile {
    /// Replaces `path` with `bytes`; `mode` applies to the new file.
    package static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(StateFileError) {
        var fd: Int32 = -1
        var temporary = ""
        for _ in 0..<8 {
            temporary = path + ".tmp-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw failure("cannot create \(temporary)", path: path) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let error = failure("cannot write \(temporary)", path: path, code: n == 0 ? ENOSPC : errno)
                close(fd)
                unlink(temporary)
                throw error
            }
            offset += n
        }
        guard fsync(fd) == 0 else {
            let error = failure("cannot fsync \(temporary)", path: path)
            close(fd)
            unlink(temporary)
            throw error
        }
        guard close(fd) == 0 else {
            let error = failure("cannot close \(temporary)", path: path)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = failure("cannot rename \(temporary) to \(path)", path: path)
            unlink(temporary)
            throw error
        }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let dfd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            // Some file systems refuse fsync on a directory (EINVAL); the rename is done either way.
            _ = fsync(dfd)
            close(dfd)
        }
    }

    /// The contents of `path`, read without following a final symbolic link; nil when it does not exist.
    /// Throws when it cannot be read or holds more than `limit` bytes.
    package static func read(_ path: String, limit: Int) throws(StateFileError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw StateFileError("cannot read \(path): \(String(cString: strerror(errno))) — check agent.state_dir")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else {
                throw StateFileError("cannot read \(path): \(String(cString: strerror(errno))) — check agent.state_dir")
            }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<n])
            guard bytes.count <= limit else {
                throw StateFileError(
                    "\(path) is larger than \(limit) bytes, more than the agent ever writes there — it is not the agent's file: remove it"
                )
            }
        }
    }

    static func failure(_ what: String, path: String, code: Int32 = errno) -> StateFileError {
        let reason = String(cString: strerror(code))
        if code == ENOSPC || code == EDQUOT {
            return StateFileError(
                "\(what): \(reason) — the file system is full; \(path) keeps its previous content. Free space in its directory",
                isNoSpace: true
            )
        }
        return StateFileError("\(what): \(reason); \(path) keeps its previous content")
    }
}
