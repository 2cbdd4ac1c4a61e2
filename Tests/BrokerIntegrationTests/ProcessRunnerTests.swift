import Foundation
import TestSupport
import Testing

@Suite("ProcessRunner", .timeLimit(.minutes(5)))
struct ProcessRunnerTests {
    @Test("the child gets the arguments, environment, working directory and a clean signal mask")
    func launchContext() async throws {
        let runner = ProcessRunner(
            executable: "/bin/sh",
            arguments: [
                "-c", "pwd; echo \"$GREETING\"; grep -E '^Sig(Blk|Ign)' /proc/self/status; echo oops >&2; exit 3",
            ],
            environment: ["GREETING": "hello from the test", "PATH": "/usr/bin:/bin"],
            workingDirectory: "/tmp"
        )
        try runner.start()
        #expect(await runner.waitForExit(timeout: 10) == 3)
        #expect(!runner.terminatedBySignal)
        let lines = runner.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "/tmp")
        #expect(lines.dropFirst().first == "hello from the test")
        #expect(lines.contains("SigBlk:\t0000000000000000"))
        // Signals 1–31 at their defaults; 32 and 33 are glibc's own (NPTL) and stay as glibc sets them.
        let ignored = lines.first { $0.hasPrefix("SigIgn:") }.flatMap {
            UInt64($0.dropFirst("SigIgn:\t".count), radix: 16)
        }
        #expect(ignored.map { $0 & 0x7fff_ffff } == 0)
        #expect(runner.standardError == "oops\n")
    }

    @Test("SIGTERM ends a child that keeps the default disposition")
    func terminate() async throws {
        let runner = ProcessRunner(executable: "/bin/sleep", arguments: ["30"])
        try runner.start()
        #expect(runner.isRunning)
        runner.terminate()
        #expect(await runner.waitForExit(timeout: 10) == SIGTERM)
        #expect(runner.terminatedBySignal)
        #expect(!runner.isRunning)
    }

    @Test("a missing executable is a launch error")
    func missingExecutable() {
        let runner = ProcessRunner(executable: "/nonexistent/motion-agent")
        #expect(throws: ProcessRunner.LaunchError.self) { try runner.start() }
    }
}
