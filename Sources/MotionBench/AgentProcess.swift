import ArgumentParser
import CBenchSupport
import Foundation
import Harness

#if canImport(Glibc)
import Glibc
#endif

/// The release `motion-agent` as a child process of the bench (the load and batching benchmarks): started
/// with a config file, its output kept, waited for, measured through /proc and stopped with SIGTERM.
final class AgentProcess {
    /// The spawned process: the agent, or the fake IIO tree that runs it.
    let runner: ProcessRunner
    /// The agent's own pid, also inside the fake IIO tree, where it is a grandchild.
    let pid: Int32
    private let insideFakeIIO: Bool
    private var stopped = false

    /// Throws, saying how to build it, when there is no executable at `path`.
    static func requireExecutable(_ path: String) throws {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ValidationError("no executable at \(path) — build it: swift build -c release --product motion-agent")
        }
    }

    /// Starts `agent run --config configPath`; with `fakeIIO`, inside the fake IIO tree made from that spec.
    init(agent: String, configPath: String, fakeIIO: (script: String, spec: String)? = nil) throws {
        let command = [agent, "run", "--config", configPath]
        if let fakeIIO {
            // The fake does not forward SIGTERM (it ends when its command does): the agent is measured and
            // stopped by its own pid; the Python writers feeding the FIFOs are other processes.
            runner = ProcessRunner(
                executable: "/usr/bin/python3",
                arguments: [fakeIIO.script, fakeIIO.spec, "--"] + command
            )
            try runner.start()
            pid = try ProcessStatistics.findProcess(arguments: command, timeout: 30)
        } else {
            runner = ProcessRunner(executable: agent, arguments: Array(command.dropFirst()))
            try runner.start()
            pid = runner.processIdentifier
        }
        insideFakeIIO = fakeIIO != nil
    }

    var isRunning: Bool { insideFakeIIO ? kill(pid, 0) == 0 && runner.isRunning : runner.isRunning }

    /// Everything the agent wrote so far (it logs to stderr).
    var log: String { runner.standardError + runner.standardOutput }

    /// Waits, polling every 50 ms, until `condition` holds; throws with the agent's log when it ended first or
    /// `timeout` seconds passed.
    func waitUntil(timeout: Double, _ what: String, _ condition: () -> Bool) async throws {
        let deadline = bench_monotonic_ns() + UInt64(timeout * 1e9)
        while !condition() {
            guard bench_monotonic_ns() < deadline, isRunning else {
                throw ValidationError("motion-agent did not \(what) within \(Int(timeout)) s; its log:\n\(log)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// SIGTERM (to the agent itself inside the fake IIO tree), SIGKILL after `grace` seconds.
    func stop(grace: Double = 10) async {
        guard !stopped else { return }
        stopped = true
        if insideFakeIIO { kill(pid, SIGTERM) }
        await runner.stop(grace: grace)
    }

    /// Runs `body`, then stops the agent (if `body` did not already), also when `body` throws.
    func stopping<Result>(after body: () async throws -> Result) async throws -> Result {
        do {
            let result = try await body()
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }

    /// Copies the log to /tmp for a post-mortem (the broker's directory goes with the broker); returns the path.
    func keepLog(name: String) -> String {
        let path = "/tmp/motion-bench-\(name)-\(getpid())-\(bench_monotonic_ns()).log"
        try? log.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
