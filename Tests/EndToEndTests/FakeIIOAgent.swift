import AgentPorts
import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The real `motion-agent` binary running inside a fake IIO tree (Sources/Harness/FakeIIOTree/fake_iio.py), as a daemon.
///
/// The fixture runs its command in a private mount namespace, two processes below the one started here, so
/// the command is a shell that writes its pid and `exec`s the agent: the test stops the agent itself with
/// SIGTERM (a clean goodbye) and the fixture then ends by itself.
final class FakeIIOAgent: Sendable {
    let runner: ProcessRunner
    let directory: String
    let configPath: String
    private let pidPath: String

    /// Writes `spec` and `config` (YAML) into a fresh directory and starts `motion-agent run` inside the tree.
    init(spec: FakeIIOSpec, config: String) throws {
        directory = NSTemporaryDirectory() + "motion-agent-iio-e2e-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        configPath = directory + "/config.yaml"
        pidPath = directory + "/agent.pid"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let specPath = directory + "/spec.json"
        try JSONEncoder().encode(spec).write(to: URL(fileURLWithPath: specPath))
        guard FileManager.default.isExecutableFile(atPath: AgentProcess.executable) else {
            throw MissingBinary(path: AgentProcess.executable)
        }
        runner = ProcessRunner(
            executable: try Self.python(),
            arguments: [
                FakeIIO.scriptPath, specPath, "--",
                "/bin/sh", "-c", "echo $$ > \"$0\" && exec \"$@\"", pidPath,
                AgentProcess.executable, "run", "--config", configPath,
            ],
            environment: ProcessInfo.processInfo.environment,
            workingDirectory: directory
        )
        try runner.start()
    }

    deinit {
        if let pid = agentPID { kill(pid, SIGKILL) }
        if runner.isRunning { runner.kill() }
    }

    static func python() throws -> String {
        guard
            let path = ["/usr/bin/python3", "/usr/local/bin/python3"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else { throw FakeIIOAgentError(description: "python3 is needed to build the fake IIO tree; install python3") }
        return path
    }

    /// The agent's pid inside the tree, once the shell has written it.
    var agentPID: pid_t? {
        (try? String(contentsOfFile: pidPath, encoding: .utf8)).flatMap {
            pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// SIGTERM to the agent, then waits for the fixture to end; returns the fixture's exit status (the agent's).
    @discardableResult
    func stop(timeout: Double = 20) async -> Int32? {
        if let pid = agentPID, runner.isRunning { kill(pid, SIGTERM) }
        let status = await runner.waitForExit(timeout: timeout)
        if status == nil, let pid = agentPID {
            kill(pid, SIGKILL)
            return await runner.waitForExit(timeout: 5)
        }
        return status
    }

    /// Runs `body`; if it fails, the error says how the fixture or the agent ended and what they printed last
    /// (the fixture's own message when the namespace could not be set up).
    @discardableResult
    func explaining<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            let exit = runner.exitCode.map { "exited with status \($0)" } ?? "is still running"
            throw FakeIIOAgentError(
                description: "\(error)\nthe fake IIO fixture with the agent \(exit); its stderr ends with:\n"
                    + String(runner.standardError.suffix(3000))
            )
        }
    }
}

/// CLOCK_MONOTONIC now, ns: the fake devices' first timestamp, so buffered and polled devices share one time
/// line as on hardware (the agent stamps polled devices on CLOCK_MONOTONIC).
func monotonicNowNs() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// The fixture or the agent in it failed, with what they printed.
struct FakeIIOAgentError: Error, CustomStringConvertible {
    var description: String
}
