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
        let descriptor: Int32
        switch openRegularFile(path) {
        case .failure(let problem): return .failure(problem)
        case .success(let opened): descriptor = opened
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536, !bytes.contains(0x0A) {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 { return .failure(cannotRead(errno)) }
            if count == 0 { break }
            bytes += chunk[0..<count]
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
