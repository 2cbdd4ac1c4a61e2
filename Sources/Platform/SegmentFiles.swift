import AgentPorts

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The durable outbox's folder on the local file system (`SegmentStorage`): one append descriptor, one read
/// descriptor kept open on the segment last read, and the cursor replaced through `AtomicFile`. A record is one
/// `write(2)`, not fsynced: the page cache outlives a killed process, and a power cut costs at most what the
/// kernel had not flushed (the log cuts a torn tail at its next open).
package final class SegmentFiles: SegmentStorage {
    package let folder: String
    private var appendFD: Int32 = -1
    private var readFD: Int32 = -1
    private var readName = ""

    /// Opens the folder, creating it (and its missing parents) when needed.
    package init(folder: String) throws(StateFileError) {
        var p = folder
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        self.folder = p
        var path = p.hasPrefix("/") ? "" : "."
        for part in p.split(separator: "/") {
            path += "/" + part
            try StateFiles.makeDirectory(path)
        }
    }

    deinit { closeFiles() }

    private func path(_ name: String) -> String { folder + "/" + name }

    package func segmentNames() -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".log") { names.append(name) }
        }
        return names.sorted()
    }

    package func contents(of segment: String) -> [UInt8]? {
        // A segment is at most a few MiB (DurableLog.maxSegmentBytes); anything larger is not the log's.
        try? AtomicFile.read(path(segment), limit: 64 << 20)
    }

    package func truncate(_ segment: String, to bytes: Int) {
        _ = Glibc.truncate(path(segment), off_t(bytes))
    }

    package func remove(_ segment: String) {
        if readName == segment {
            close(readFD)
            readFD = -1
            readName = ""
        }
        unlink(path(segment))
    }

    package func beginAppending(to segment: String, existing: Bool) throws(StateFileError) {
        if appendFD >= 0 { close(appendFD) }
        let flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (existing ? 0 : O_CREAT | O_TRUNC)
        appendFD = open(path(segment), flags, 0o600)
        guard appendFD >= 0 else {
            throw StateFileError(
                "cannot \(existing ? "open" : "create") \(path(segment)) for writing: \(String(cString: strerror(errno))) — check the state directory",
                isNoSpace: errno == ENOSPC || errno == EDQUOT
            )
        }
    }

    package func append(_ bytes: UnsafeRawBufferPointer, length: Int) -> SegmentAppendOutcome {
        guard appendFD >= 0 else { return .failed("no segment is open for writing") }
        let written = Glibc.write(appendFD, bytes.baseAddress, bytes.count)
        if written == bytes.count { return .written }
        let code = errno
        // Keep the file whole: a partial record would hide every later one behind a bad CRC.
        if written > 0 { _ = ftruncate(appendFD, off_t(length)) }
        if code == ENOSPC || code == EDQUOT || written >= 0 { return .noSpace }
        return .failed(String(cString: strerror(code)))
    }

    package func freeBytes() -> Int {
        var stats = statvfs()
        let rc = appendFD >= 0 ? fstatvfs(appendFD, &stats) : statvfs(folder, &stats)
        guard rc == 0 else { return .max }
        // f_bavail: blocks an unprivileged writer may use; the agent should not eat root's reserve either.
        let free = UInt64(stats.f_bavail).multipliedReportingOverflow(by: UInt64(stats.f_frsize))
        return free.overflow || free.partialValue > UInt64(Int.max) ? .max : Int(free.partialValue)
    }

    package func read(_ segment: String, at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if readName != segment {
            if readFD >= 0 { close(readFD) }
            readFD = open(path(segment), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            readName = readFD >= 0 ? segment : ""
        }
        guard readFD >= 0 else { return -1 }
        return pread(readFD, buffer.baseAddress, buffer.count, off_t(offset))
    }

    package func readCursor() -> String? {
        (try? AtomicFile.read(path("cursor"), limit: 4096)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
    }

    package func writeCursor(_ text: String) throws(StateFileError) {
        try AtomicFile.write(Array(text.utf8), to: path("cursor"), mode: 0o600)
    }

    package func closeFiles() {
        if appendFD >= 0 { close(appendFD) }
        if readFD >= 0 { close(readFD) }
        appendFD = -1
        readFD = -1
        readName = ""
    }
}
