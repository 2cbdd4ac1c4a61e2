import Foundation

/// A fresh directory per test, removed when the value goes away, so tests can run in parallel.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("agent-config-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `contents` to `name` inside the directory and returns the file's path.
    @discardableResult
    func write(_ name: String, _ contents: String) throws -> String {
        let file = path + "/" + name
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true
        )
        try contents.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Writes a secret (a password, a private key) readable by its owner only, as the agent requires.
    @discardableResult
    func writeSecret(_ name: String, _ contents: String) throws -> String {
        let file = try write(name, contents)
        guard chmod(file, 0o600) == 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: file])
        }
        return file
    }
}
