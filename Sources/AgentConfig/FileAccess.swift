#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file checks the loader makes up front, so that a missing secret or certificate stops the agent at
/// start with the option's name instead of failing later inside libmosquitto or the replay source.
enum FileAccess {
    /// The problem with reading `path` as a regular file, if any (the C library's reason, e.g. "No such file
    /// or directory").
    static func checkReadableFile(_ path: String) -> FieldProblem? {
        switch openRegularFile(path) {
        case .failure(let problem): return problem
        case .success(let descriptor):
            close(descriptor)
            return nil
        }
    }

    /// The first line of the file at `path`, without its line break. Only the first 64 KiB are read: a
    /// password or token is far shorter, and a huge file here is a mistake.
    static func firstLine(of path: String) -> Result<String, FieldProblem> {
        let bytes: [UInt8]
        switch readRegularFile(path, while: { $0.count < 65536 && !$0.contains(0x0A) }) {
        case .failure(let problem): return .failure(problem)
        case .success(let read): bytes = read
        }
        var line = bytes.prefix { $0 != 0x0A }
        if line.last == 0x0D { line = line.dropLast() }  // a file written on Windows
        guard let text = String(validating: line, as: UTF8.self) else {
            return .failure(FieldProblem(kind: .fileUnavailable, problem: "does not start with a line of UTF-8 text"))
        }
        if text.isEmpty {
            return .failure(
                FieldProblem(kind: .fileUnavailable, problem: "has an empty first line (the password goes there)")
            )
        }
        return .success(text)
    }

    /// An HMAC key shorter than this is refused, bytes. RFC 2104 §3 discourages keys shorter than the hash's
    /// output (32 bytes for HMAC-SHA256, the recommended length); 16 bytes (128 bits, AES-128's strength) is
    /// the least accepted.
    static let minimumKeyBytes = 16

    /// Key files larger than this are refused unread, bytes: a key is a few dozen bytes, a large file here
    /// is the wrong file.
    static let maximumKeyFileBytes = 65536

    /// The bytes of the key file at `path` without one trailing line break (`\n` or `\r\n`, as `echo` and
    /// editors leave it), so `openssl rand -hex 32 > key` gives the 64 hex characters as the key.
    static func key(at path: String) -> Result<[UInt8], FieldProblem> {
        var bytes: [UInt8]
        switch readRegularFile(path, while: { $0.count <= maximumKeyFileBytes }) {
        case .failure(let problem): return .failure(problem)
        case .success(let read): bytes = read
        }
        if bytes.count > maximumKeyFileBytes {
            return .failure(
                FieldProblem(
                    kind: .invalidValue,
                    problem: "is larger than \(maximumKeyFileBytes) bytes, too large for a key file"
                )
            )
        }
        if bytes.last == 0x0A {
            bytes.removeLast()
            if bytes.last == 0x0D { bytes.removeLast() }
        }
        if bytes.count < minimumKeyBytes {
            return .failure(
                FieldProblem(
                    kind: .invalidValue,
                    problem: "holds a \(bytes.count)-byte key; an HMAC key needs at least \(minimumKeyBytes) bytes"
                )
            )
        }
        return .success(bytes)
    }

    /// Reads the regular file at `path` 4 KiB at a time for as long as `more` says, from what was read so far.
    private static func readRegularFile(
        _ path: String,
        while more: ([UInt8]) -> Bool
    ) -> Result<[UInt8], FieldProblem> {
        let descriptor: Int32
        switch openRegularFile(path) {
        case .failure(let problem): return .failure(problem)
        case .success(let opened): descriptor = opened
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while more(bytes) {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 { return .failure(cannotRead(errno)) }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return .success(bytes)
    }

    private static func openRegularFile(_ path: String) -> Result<Int32, FieldProblem> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 { return .failure(cannotRead(errno)) }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            close(descriptor)
            return .failure(FieldProblem(kind: .fileUnavailable, problem: "is a directory, not a file"))
        }
        return .success(descriptor)
    }

    static func cannotRead(_ code: Int32) -> FieldProblem {
        FieldProblem(kind: .fileUnavailable, problem: "cannot be read: " + String(cString: strerror(code)))
    }
}
