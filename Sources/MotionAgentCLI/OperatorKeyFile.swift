import AgentControl
import ArgumentParser
import Foundation
import Platform

#if canImport(Glibc)
import Glibc
#endif

/// An operator's signing key on the operator's machine (`--signing-key FILE`): read only when no one else may read it,
/// and the counter that orders this key's signatures, kept beside it in `FILE.counter`.
struct OperatorKeyFile {
    let path: String
    let key: OperatorSigningKey

    /// Reads `path`; refused (with the fix) when its group or others may read or write it, as ssh refuses keys.
    init(path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw ValidationError(
                "--signing-key \(path): \(String(cString: strerror(errno))) — make one with motion-agent keys generate"
            )
        }
        if status.st_mode & (S_IRWXG | S_IRWXO) != 0 {
            throw ValidationError(
                "--signing-key \(path) may be read or written by others (mode \(String(status.st_mode & 0o777, radix: 8))): whoever reads it can steer the fleet — chmod 600 \(path)"
            )
        }
        guard let data = FileManager.default.contents(atPath: path),
            let text = String(data: data, encoding: .utf8)
        else { throw ValidationError("--signing-key \(path) cannot be read") }
        do {
            key = try OperatorSigningKey.parse(text)
        } catch {
            throw ValidationError("--signing-key \(path) \(error)")
        }
        self.path = path
    }

    /// The next counter for this key: above the last one used, and at least the microseconds since 1970 now —
    /// so a lost counter file, or a second machine with the same key, still rises (devices refuse a counter at or
    /// below what they saw). Kept in `FILE.counter` before it is used.
    func nextCounter() throws -> Int {
        let counterPath = path + ".counter"
        let last =
            FileManager.default.contents(atPath: counterPath)
            .flatMap { Int(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        let now = Int(Date().timeIntervalSince1970 * 1e6)
        let next = max(last + 1, now)
        do {
            try AtomicFile.write(Array("\(next)\n".utf8), to: counterPath, mode: 0o600)
        } catch {
            throw ValidationError("cannot keep the key's counter in \(counterPath): \(error)")
        }
        return next
    }
}
