import Foundation
import Harness
import Testing

/// The independent Sparkplug host (clients/python/motion_agent_client/sparkplug_host.py, on pysparkplug) as a
/// child process: it prints one JSON object per message it decoded and follows a command file (rebirth, DCMD
/// writes, its own STATE going offline and online).
final class SparkplugHostProcess: Sendable {
    let process: ProcessRunner
    let commandFile: String

    /// The venv scripts/test.sh makes for it (pysparkplug pins paho-mqtt < 2, so it is not the client's venv):
    /// MOTION_AGENT_SPARKPLUG_PYTHON, else .build/sparkplug-venv.
    static func python() throws -> String {
        if let path = ProcessInfo.processInfo.environment["MOTION_AGENT_SPARKPLUG_PYTHON"], !path.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw HostError(
                    "MOTION_AGENT_SPARKPLUG_PYTHON=\(path) is not an executable — run `bash scripts/test.sh`, which "
                        + "creates .build/sparkplug-venv with pysparkplug from PyPI"
                )
            }
            return path
        }
        let venv = repository + "/.build/sparkplug-venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: venv) else {
            throw HostError(
                "no Python with pysparkplug: MOTION_AGENT_SPARKPLUG_PYTHON is unset and \(venv) does not exist — run "
                    + "`bash scripts/test.sh` (it creates that venv with pysparkplug from PyPI)"
            )
        }
        return venv
    }

    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    init(
        port: Int,
        group: String,
        primaryHostID: String? = nil,
        account: (username: String, passwordFile: String)? = nil,
        directory: String
    ) throws {
        commandFile = directory + "/host-commands-\(UUID().uuidString).jsonl"
        FileManager.default.createFile(atPath: commandFile, contents: Data())
        var arguments = [
            "-m", "motion_agent_client.sparkplug_host", "--host", "127.0.0.1", "--port", String(port), "--group", group,
            "--json", "--commands", commandFile,
        ]
        if let primaryHostID { arguments += ["--primary-host-id", primaryHostID] }
        if let account { arguments += ["--username", account.username, "--password-file", account.passwordFile] }
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONPATH"] = Self.repository + "/clients/python"
        environment["PYTHONUNBUFFERED"] = "1"
        process = ProcessRunner(executable: try Self.python(), arguments: arguments, environment: environment)
    }

    func start() async throws {
        try process.start()
        guard await process.waitForOutput(containing: "\"READY\"", timeout: 30) else {
            throw HostError("the Sparkplug host did not connect: \(process.standardError)")
        }
    }

    /// Appends one command for the host to carry out.
    func send(_ command: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: commandFile))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((command + "\n").utf8))
    }

    /// Every record printed so far.
    var records: [[String: Any]] {
        process.standardOutput.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    func records(_ type: String, device: String? = nil) -> [[String: Any]] {
        records.filter { $0["type"] as? String == type && (device == nil || $0["device"] as? String == device) }
    }

    /// Waits until `predicate` holds for the records, or fails after `timeout` seconds.
    func waitFor(
        _ what: String,
        timeout: Double = 20,
        _ predicate: ([[String: Any]]) -> Bool
    ) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if predicate(records) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        if predicate(records) { return }
        throw HostError(
            "the host never saw \(what); it printed:\n\(process.standardOutput.suffix(4000))\n\(process.standardError.suffix(2000))"
        )
    }

    func stop() async { await process.stop(grace: 5) }

    /// Every decoding error, seq gap or alias conflict the host noticed.
    var problems: [String] {
        records.compactMap { $0["error"] as? String }
            + records.filter { $0["seqGap"] as? Bool == true }.map { "seq gap at \($0["topic"] ?? "")" }
    }
}

struct HostError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension [String: Any] {
    var metrics: [[String: Any]] { self["metrics"] as? [[String: Any]] ?? [] }

    func metric(_ name: String) -> [String: Any]? { metrics.first { $0["name"] as? String == name } }
}
