import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The real `motion-agent` with its state directory on a small tmpfs of its own: a private mount namespace
/// (`unshare -m`, root only) whose shell mounts the tmpfs, optionally fills part of it with a ballast file,
/// and `exec`s the agent — so the runner's pid is the agent's, and `inside` runs commands in its namespace
/// (reading health.json, removing the ballast) with `nsenter`.
final class StateDirectoryAgent: Sendable {
    let runner: ProcessRunner
    let directory: String
    var stateDirectory: String { directory + "/state" }

    init(config: String, tmpfsKiB: Int, ballastKiB: Int) throws {
        directory = NSTemporaryDirectory() + "motion-agent-chaos-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: true)
        let configPath = directory + "/config.yaml"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        guard FileManager.default.isExecutableFile(atPath: AgentProcess.executable) else {
            throw MissingBinary(path: AgentProcess.executable)
        }
        let script = """
            mount -t tmpfs -o size=\(tmpfsKiB)k motion-agent-state "$0/state" || exit 90
            [ \(ballastKiB) -eq 0 ] || head -c \(ballastKiB * 1024) /dev/zero > "$0/state/ballast" || exit 91
            exec "$@"
            """
        runner = ProcessRunner(
            executable: "/usr/bin/unshare",
            arguments: [
                "--mount", "--propagation", "private", "/bin/sh", "-c", script, directory,
                AgentProcess.executable, "run", "--config", configPath,
            ],
            environment: ProcessInfo.processInfo.environment,
            workingDirectory: directory
        )
        try runner.start()
    }

    deinit {
        if runner.isRunning { runner.kill() }
    }

    /// Runs `command` (sh) in the agent's mount namespace; its standard output, or nil when it failed.
    func inside(_ command: String) async -> String? {
        let pid = runner.processIdentifier
        guard pid > 0 else { return nil }
        let shell = ProcessRunner(
            executable: "/usr/bin/nsenter",
            arguments: ["--target", "\(pid)", "--mount", "--", "/bin/sh", "-c", command]
        )
        guard (try? shell.start()) != nil, await shell.waitForExit(timeout: 10) == 0 else { return nil }
        return shell.standardOutput
    }

    /// health.json as the agent last wrote it, read inside its namespace.
    func health() async -> [String: Any]? {
        guard let text = await inside("cat '\(stateDirectory)/health.json'") else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    /// The agent's resident memory (VmRSS), bytes.
    var residentBytes: Int? { runner.residentBytes }
}
