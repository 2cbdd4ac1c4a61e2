import AgentPorts
import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a record/replay CSV (`RecordingFormat`) a block at a time, checking each row as it goes.
///
/// Memory stays at one block however long the file: replay streams through this instead of loading the
/// recording, since an hour at 1 kHz is 3.6 million rows (about 400 MB as samples). Rows are checked as
/// `Recording` always did: the header first, then every cell, with timestamps never going backwards.
package struct RecordingReader: ~Copyable {
    package let path: String
    /// The line of the row `next()` returned last (1 is the header).
    package private(set) var lineNumber = 0
    private let descriptor: Int32
    /// Complete lines read and not yet returned, and the bytes after the last newline read so far.
    private var text = ""
    private var cursor: String.Index
    private var tail: [UInt8] = []
    /// The buffer `read` fills, allocated once: growing `tail` by a block of zeros and reading into it cost
    /// 65 536 element-wise appends per block in an unoptimized build (libFuzzer found ~50 ms per tiny file).
    private var block = [UInt8](repeating: 0, count: RecordingReader.blockSize)
    private var atEnd = false
    private var previous = -Double.infinity
    /// 16 KiB holds ~200 rows: ~5 reads a second of a 1 kHz recording. The block, the unread bytes and the text
    /// of whole lines are each up to a block and live as long as the replay: at 64 KiB they were 0.25 MB of the
    /// replaying agent's heap (heaptrack), for one read a second fewer.
    package static let blockSize = 16384
    /// A row is ~100 bytes; a "line" this long means the file is not a recording, and reading on would only
    /// grow memory.
    static let longestLine = 1 << 20

    /// Opens `path` and reads up to its header.
    package init(path: String) throws(RecordingError) {
        self.path = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        cursor = text.startIndex
        guard descriptor >= 0 else { throw readError() }
        try readHeader()
    }

    deinit {
        close(descriptor)
    }

    /// The next sample, or nil at the end of the file.
    package mutating func next() throws(RecordingError) -> IMUSample? {
        while let line = try nextLine() {
            if Self.isBlank(line) { continue }
            do throws(RecordingError) {
                let sample = try RecordingFormat.parse(row: line, lineNumber: lineNumber)
                guard sample.timestamp >= previous else {
                    throw RecordingError(
                        line: lineNumber,
                        message:
                            "timestamp \(sample.timestamp) goes backwards (previous \(previous)) — rows must be in time order"
                    )
                }
                previous = sample.timestamp
                return sample
            } catch {
                var located = error
                located.file = path
                throw located
            }
        }
        return nil
    }

    /// Starts over at the first row (replay's loop).
    package mutating func rewind() throws(RecordingError) {
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { throw readError() }
        text = ""
        cursor = text.startIndex
        tail.removeAll(keepingCapacity: true)
        atEnd = false
        lineNumber = 0
        previous = -Double.infinity
        try readHeader()
    }

    private mutating func readHeader() throws(RecordingError) {
        while let line = try nextLine() {
            if Self.isBlank(line) { continue }
            let columns = line.split(separator: ",").map { String($0.trimmingSpaces) }
            guard Array(columns.prefix(RecordingFormat.columns.count)) == RecordingFormat.columns else {
                throw RecordingError(
                    file: path,
                    line: lineNumber,
                    message: "the header must begin with \(RecordingFormat.header)"
                )
            }
            return
        }
        throw RecordingError(file: path, line: 1, message: "empty file — expected the header \(RecordingFormat.header)")
    }

    /// The next line without its newline, or nil at the end of the file.
    private mutating func nextLine() throws(RecordingError) -> Substring? {
        while true {
            if let newline = text.utf8[cursor...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = text[cursor..<newline]
                cursor = text.utf8.index(after: newline)
                lineNumber += 1
                return line
            }
            if atEnd { return nil }
            try refill()
        }
    }

    /// Reads the next block. Only whole lines become text, so a multi-byte character is never cut in two;
    /// the last line of a file without a final newline becomes text at the end of the file.
    private mutating func refill() throws(RecordingError) {
        let descriptor = self.descriptor
        let count = block.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, Self.blockSize) }
        guard count >= 0 else {
            if errno == EINTR { return }
            throw readError()
        }
        tail.append(contentsOf: block[..<count])
        if count == 0 {
            atEnd = true
            text = tail.isEmpty ? "" : String(decoding: tail, as: UTF8.self) + "\n"
            tail.removeAll(keepingCapacity: true)
        } else if let lastNewline = tail.lastIndex(of: UInt8(ascii: "\n")) {
            text = String(decoding: tail[...lastNewline], as: UTF8.self)
            tail.removeSubrange(...lastNewline)
        } else if tail.count > Self.longestLine {
            throw RecordingError(
                file: path,
                line: lineNumber + 1,
                message: "no line end in the first \(Self.longestLine / 1024) KiB of this line — is it a recording CSV?"
            )
        } else {
            return  // a line longer than the block so far: read on
        }
        cursor = text.startIndex
    }

    private func readError() -> RecordingError {
        RecordingError(
            file: path,
            line: lineNumber,
            message: "cannot read: \(String(cString: strerror(errno))) — check source.replay.file / --input"
        )
    }

    private static func isBlank(_ line: Substring) -> Bool {
        line.utf8.allSatisfy { $0 == UInt8(ascii: "\r") }
    }
}
