import Foundation

/// The system tests' VM (scripts/system/vm/vm.sh): Debian 12's own kernel in QEMU, from an image built of Debian
/// packages and cached by its recipe. Starts it, runs commands in it as root over ssh (127.0.0.1 only), copies
/// files in and out, hands back the guest's console and journal for a failure's message, and always stops it.
/// One VM at a time on a machine: `start` waits for a lock file so parallel tests queue instead of
/// overloading the two cores.
package final class VirtualMachine: Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// The repository root (scripts/system/vm lives there).
    package static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    package let runDirectory: String
    private let lockFD: Int32

    private init(runDirectory: String, lockFD: Int32) {
        self.runDirectory = runDirectory
        self.lockFD = lockFD
    }

    deinit { stopSynchronously() }

    /// Builds or reuses the image and boots it; returns once the guest's ssh answers.
    package static func start() async throws -> VirtualMachine {
        let base = repository + "/.build/vm"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let lockFD = open(base + "/one-vm.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard lockFD >= 0 else { throw Failure(description: "cannot open \(base)/one-vm.lock: errno \(errno)") }
        while flock(lockFD, LOCK_EX | LOCK_NB) != 0 { try await Task.sleep(for: .seconds(1)) }
        let run = base + "/run-swift-\(getpid())-\(UUID().uuidString.prefix(6))"
        let vm = VirtualMachine(runDirectory: run, lockFD: lockFD)
        let result = try await vm.launcher(["start", run], timeout: 1500)
        guard result.status == 0 else {
            throw Failure(
                description:
                    "the VM did not start (scripts/system/vm/vm.sh start \(run)):\n\(result.error.suffix(3000))"
            )
        }
        return vm
    }

    /// Seconds from QEMU's start until the guest's ssh answered, and the accelerator (kvm or tcg).
    package var bootSeconds: String {
        (try? String(contentsOfFile: runDirectory + "/boot-seconds", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
    }
    package var accelerator: String {
        (try? String(contentsOfFile: runDirectory + "/accel", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
    }

    /// Runs a shell command in the guest as root; throws with its output and the guest's logs on a non-zero exit.
    @discardableResult
    package func run(_ command: String, timeout: Double = 120) async throws -> String {
        let result = try await launcher(["ssh", runDirectory, command], timeout: timeout)
        guard result.status == 0 else {
            throw Failure(
                description: """
                    `\(command)` failed in the guest (exit \(result.status.map(String.init) ?? "timeout")):
                    \(result.output)\(result.error)
                    \(await logs())
                    """
            )
        }
        return result.output
    }

    /// Copies a host file into the guest.
    package func put(_ hostPath: String, to guestPath: String) async throws {
        let result = try await launcher(["put", runDirectory, hostPath, guestPath], timeout: 300)
        guard result.status == 0 else {
            throw Failure(description: "copying \(hostPath) to the guest's \(guestPath) failed: \(result.error)")
        }
    }

    /// The guest's console and journal, for a failing test's message.
    package func logs() async -> String {
        (try? await launcher(["logs", runDirectory], timeout: 60).output) ?? "(no logs: the launcher failed)"
    }

    /// Powers the guest off (QEMU is killed if it does not stop in 30 s) and releases the one-VM lock.
    package func stop() async {
        _ = try? await launcher(["stop", runDirectory], timeout: 60)
        flock(lockFD, LOCK_UN)
    }

    private func stopSynchronously() {
        let pidFile = runDirectory + "/qemu.pid"
        if let text = try? String(contentsOfFile: pidFile, encoding: .utf8), let pid = Int32(text.trimmed) {
            kill(pid, SIGKILL)
        }
        close(lockFD)
    }

    private func launcher(
        _ arguments: [String],
        timeout: Double
    ) async throws -> (
        status: Int32?, output: String, error: String
    ) {
        let runner = ProcessRunner(
            executable: "/bin/bash",
            arguments: [Self.repository + "/scripts/system/vm/vm.sh"] + arguments,
            workingDirectory: Self.repository
        )
        try runner.start()
        let status = await runner.waitForExit(timeout: timeout)
        if status == nil { runner.kill() }
        return (status, runner.standardOutput, runner.standardError)
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
