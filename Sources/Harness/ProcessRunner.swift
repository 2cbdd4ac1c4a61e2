import Foundation
import Platform
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process for tests: arguments, environment and working directory in; stdout and stderr captured
/// into buffers readable while it runs; signals; a bounded wait for its exit.
///
/// It spawns with posix_spawn rather than Foundation's `Process`: on Linux the latter starts children with
/// almost every signal blocked (SigBlk fffffffe3bfbea27 measured here), so a SIGTERM to mosquitto — or to
/// motion-agent, whose graceful shutdown the end-to-end tests check — stays pending forever. Here the child
/// gets an empty signal mask and default dispositions, as it would from a shell.
package final class ProcessRunner: Sendable {
    package let executable: String
    package let arguments: [String]
    package let environment: [String: String]?
    package let workingDirectory: String?

    private let state = StateBox()

    private final class StateBox: Sendable {
        let value = Mutex(State())
        func withLock<R>(_ body: (inout State) -> R) -> R { value.withLock { body(&$0) } }
    }

    private struct State {
        var pid: pid_t?
        var standardOutput: [UInt8] = []
        var standardError: [UInt8] = []
        var outputClosed = false
        var errorClosed = false
        /// Exit status, or the signal number when `terminatedBySignal`; set once the child is reaped.
        var exitCode: Int32?
        var terminatedBySignal = false
    }

    package struct LaunchError: Error, CustomStringConvertible {
        package var description: String
    }

    /// - Parameters:
    ///   - environment: the child's whole environment; `nil` inherits this process's.
    ///   - workingDirectory: `nil` inherits this process's.
    package init(
        executable: String,
        arguments: [String] = [],
        environment: [String: String]? = nil,
        workingDirectory: String? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
    }

    deinit {
        // Never leave a child behind; the reaper thread collects it.
        let pid = state.withLock { $0.exitCode == nil ? $0.pid : nil }
        if let pid { _ = sendSignal(pid, SIGKILL) }
    }

    /// Launches the process; output starts filling `standardOutput` and `standardError` at once.
    package func start() throws {
        guard state.withLock({ $0.pid == nil }) else {
            throw LaunchError(description: "\(executable) was already started")
        }
        var outputPipe: [Int32] = [-1, -1]
        var errorPipe: [Int32] = [-1, -1]
        guard Self.pipe2(&outputPipe, O_CLOEXEC) == 0, Self.pipe2(&errorPipe, O_CLOEXEC) == 0 else {
            throw LaunchError(description: "pipe2 failed: \(String(cString: strerror(errno)))")
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
        if let workingDirectory {
            guard let addChdir = Self.addChdir else {
                throw LaunchError(description: "posix_spawn_file_actions_addchdir_np is missing (glibc ≥ 2.29 needed)")
            }
            let rc = workingDirectory.withCString { addChdir(&actions, $0) }
            guard rc == 0 else { throw LaunchError(description: "chdir action: \(String(cString: strerror(rc)))") }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal: Int32 in 1..<32 where signal != SIGKILL && signal != SIGSTOP { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let environmentStrings = environment.map { $0.map { "\($0.key)=\($0.value)" }.sorted() }
        let envp = environmentStrings.map { $0.map { strdup($0) } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }

        var pid: pid_t = 0
        let rc = argv.withUnsafeBufferPointer { argvBuffer in
            if let envp {
                return envp.withUnsafeBufferPointer { envpBuffer in
                    posix_spawn(
                        &pid,
                        executable,
                        &actions,
                        &attributes,
                        argvBuffer.baseAddress!,
                        envpBuffer.baseAddress!
                    )
                }
            }
            return posix_spawn(&pid, executable, &actions, &attributes, argvBuffer.baseAddress!, environ)
        }
        // The child holds its own copies of the write ends; without closing ours the readers never see EOF.
        close(outputPipe[1])
        close(errorPipe[1])
        guard rc == 0 else {
            close(outputPipe[0])
            close(errorPipe[0])
            throw LaunchError(description: "could not launch \(executable): \(String(cString: strerror(rc)))")
        }
        state.withLock { $0.pid = pid }

        let state = self.state
        let childPID = pid
        let outputReader = outputPipe[0]
        let errorReader = errorPipe[0]
        Thread {
            Self.drain(outputReader) { bytes in state.withLock { $0.standardOutput.append(contentsOf: bytes) } }
            state.withLock { $0.outputClosed = true }
        }.start()
        Thread {
            Self.drain(errorReader) { bytes in state.withLock { $0.standardError.append(contentsOf: bytes) } }
            state.withLock { $0.errorClosed = true }
        }.start()
        Thread {
            var status: Int32 = 0
            while waitpid(childPID, &status, 0) < 0 && errno == EINTR {}
            // <sys/wait.h>: WIFSIGNALED when the low 7 bits are a signal number (not 0, not 0x7f).
            let signal = status & 0x7f
            let bySignal = signal != 0 && signal != 0x7f
            state.withLock { state in
                state.terminatedBySignal = bySignal
                state.exitCode = bySignal ? signal : (status >> 8) & 0xff
            }
        }.start()
    }

    package var processIdentifier: Int32 { state.withLock { $0.pid ?? -1 } }

    package var isRunning: Bool { state.withLock { $0.pid != nil && $0.exitCode == nil } }

    package var standardOutput: String {
        state.withLock { String(decoding: $0.standardOutput, as: UTF8.self) }
    }

    package var standardError: String {
        state.withLock { String(decoding: $0.standardError, as: UTF8.self) }
    }

    /// The exit status, or the signal number when `terminatedBySignal`; `nil` while running.
    package var exitCode: Int32? { state.withLock { $0.exitCode } }

    package var terminatedBySignal: Bool { state.withLock { $0.terminatedBySignal } }

    /// Sends `signal` unless the child was already reaped (its pid could belong to another process by then).
    package func signal(_ signal: Int32) {
        state.withLock { state in
            if let pid = state.pid, state.exitCode == nil { _ = sendSignal(pid, signal) }
        }
    }

    package func terminate() { signal(SIGTERM) }

    package func kill() { signal(SIGKILL) }

    /// SIGTERM, then SIGKILL when it has not exited within `grace` seconds; returns once it was reaped
    /// (bounded: 5 s after the SIGKILL).
    package func stop(grace: Double) async {
        guard isRunning else { return }
        terminate()
        if await waitForExit(timeout: grace) == nil {
            kill()
            await waitForExit(timeout: 5)
        }
    }

    /// Waits up to `timeout` seconds for the exit and for both pipes to reach end-of-file (so the buffers
    /// hold everything the process wrote). Returns the exit code, or `nil` if it is still running.
    @discardableResult
    package func waitForExit(timeout: Double) async -> Int32? {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            let done = state.withLock { $0.exitCode != nil && $0.outputClosed && $0.errorClosed }
            if done { break }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return exitCode
    }

    /// Waits up to `timeout` seconds until stdout or stderr contains `text`.
    package func waitForOutput(containing text: String, timeout: Double) async -> Bool {
        await Polling.until(timeout: timeout, interval: .milliseconds(10)) {
            standardOutput.contains(text) || standardError.contains(text)
        }
    }

    private static func drain(_ fd: Int32, _ append: (UnsafeRawBufferPointer) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.withUnsafeBytes { append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        close(fd)
    }

    /// pipe2 with O_CLOEXEC, atomically, so a child spawned by another thread at the same moment cannot
    /// inherit our write ends (and keep our readers from ever seeing EOF). Swift's Glibc module does not
    /// export this GNU function, hence the lookup.
    private static func pipe2(_ fds: inout [Int32], _ flags: Int32) -> Int32 {
        guard let pipe2Function else { return -1 }
        return fds.withUnsafeMutableBufferPointer { pipe2Function($0.baseAddress!, flags) }
    }
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private static let pipe2Function: Pipe2? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else { return nil }
        return unsafeBitCast(symbol, to: Pipe2.self)
    }()

    /// glibc's posix_spawn_file_actions_addchdir_np (2.29+), which Swift's Glibc module does not export.
    private typealias AddChdir =
        @convention(c) (
            UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>
        ) -> Int32
    private static let addChdir: AddChdir? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else {
            return nil
        }
        return unsafeBitCast(symbol, to: AddChdir.self)
    }()
}

private func sendSignal(_ pid: pid_t, _ signal: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.kill(pid, signal)
    #else
    Darwin.kill(pid, signal)
    #endif
}

extension ProcessRunner {
    /// The process's resident memory (VmRSS), bytes; nil once it has exited or when /proc cannot be read.
    package var residentBytes: Int? {
        ProcFS.statusKiB(pid: processIdentifier, "VmRSS:").map { Int($0) * 1024 }
    }
}

extension ProcessRunner {
    /// The process's peak resident memory (VmHWM), bytes, since it started or since `resetPeakResidentBytes`.
    package var peakResidentBytes: Int? {
        ProcFS.statusKiB(pid: processIdentifier, "VmHWM:").map { Int($0) * 1024 }
    }

    /// Starts the peak over at the current resident memory (`5` to /proc/PID/clear_refs, proc(5)); false when
    /// not allowed (another user's process without CAP_SYS_PTRACE) or the process is gone.
    @discardableResult
    package func resetPeakResidentBytes() -> Bool {
        (try? "5".write(toFile: "/proc/\(processIdentifier)/clear_refs", atomically: false, encoding: .utf8)) != nil
    }
}
