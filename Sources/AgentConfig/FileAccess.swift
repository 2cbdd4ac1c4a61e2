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

    /// The trusted keys file at `path`, parsed. Refused when another user could change it: a file anyone but
    /// root or the agent's user may write (or that is not theirs) could add a key, and with it the fleet's
    /// control.
    static func trustedKeys(at path: String) -> Result<TrustedKeyFile, FieldProblem> {
        if let problem = writableByOthers(path) { return .failure(problem) }
        var bytes: [UInt8]
        switch readRegularFile(path, while: { $0.count <= TrustedKeyFile.maximumBytes }) {
        case .failure(let problem): return .failure(problem)
        case .success(let read): bytes = read
        }
        guard bytes.count <= TrustedKeyFile.maximumBytes else {
            return .failure(
                FieldProblem(kind: .invalidValue, problem: "is larger than \(TrustedKeyFile.maximumBytes) bytes")
            )
        }
        if bytes.last == 0x0A { bytes.removeLast() }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(FieldProblem(kind: .invalidValue, problem: "is not UTF-8 text"))
        }
        switch TrustedKeyFile.parse(text) {
        case .success(let keys): return .success(keys)
        case .failure(let reason): return .failure(FieldProblem(kind: .invalidValue, problem: reason.description))
        }
    }

    /// Why a secret or trust file is unsafe, or nil: it must belong to root or to this process's user and be
    /// writable by no one else (group or others), as ssh requires of its keys.
    static func writableByOthers(_ path: String) -> FieldProblem? {
        var status = stat()
        // Reading it reports a missing file or one that is not a regular file.
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let owner = status.st_uid
        if owner != 0 && owner != geteuid() {
            return FieldProblem(
                kind: .invalidValue,
                problem: "belongs to user \(owner), neither root nor the agent's user — chown root it"
            )
        }
        if status.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            return FieldProblem(
                kind: .invalidValue,
                problem: "is writable by its group or by others — chmod go-w it"
            )
        }
        return nil
    }

    /// Why a secret (a password, a private key) is unsafe, or nil: like `writableByOthers`, and readable by no
    /// one else either (its group may read it, as the package's 0640 root:motion-agent files do).
    static func readableByOthers(_ path: String) -> FieldProblem? {
        if let problem = writableByOthers(path) { return problem }
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        if status.st_mode & S_IROTH != 0 {
            return FieldProblem(kind: .invalidValue, problem: "is readable by every user — chmod o-r it")
        }
        return nil
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
