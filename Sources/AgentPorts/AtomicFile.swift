#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Replaces a small state file so that a reader — or the agent after a power cut — finds the old content or
/// the new, never a mix, a torn tail or an empty file: write a temporary file beside it, fsync it, rename it
/// over the old one, fsync the directory (so the rename itself is on disk). Every step is checked; when one
/// fails (a full file system, above all) the temporary file goes and the old file stays as it was.
///
/// Foundation's `.atomic` writes rename without an fsync, which a power cut can turn into an empty file.
public enum AtomicFile {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Replaces `path` with `bytes`; `mode` applies to a file made anew.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(Failure) {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
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

    private static func failure(_ what: String, path: String, code: Int32 = errno) -> Failure {
        let reason = String(cString: strerror(code))
        if code == ENOSPC || code == EDQUOT {
            return Failure(
                description:
                    "\(what): \(reason) — the file system is full; \(path) keeps its previous content. Free space in its directory"
            )
        }
        return Failure(description: "\(what): \(reason); \(path) keeps its previous content")
    }
}
