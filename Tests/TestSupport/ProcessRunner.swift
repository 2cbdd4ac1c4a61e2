#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

private func sendSignal(_ pid: Int32, _ signal: Int32) {
    #if canImport(Glibc)
    _ = Glibc.kill(pid, signal)
    #else
    _ = Darwin.kill(pid, signal)
    #endif
}

/// A child process for tests: arguments, environment and working directory in; stdout and stderr captured
/// into buffers readable while it runs; signals; a bounded wait for its exit.
public final class ProcessRunner: Sendable {
    public let executable: String
    public let arguments: [String]

    private let process: Process
    private let captured = CapturedOutput()
    private final class CapturedOutput: Sendable {
        let state = Mutex(Captured())
        func withLock<R>(_ body: (inout Captured) -> R) -> R { state.withLock { body(&$0) } }
    }
    private struct Captured {
        var standardOutput: [UInt8] = []
        var standardError: [UInt8] = []
        var outputClosed = false
        var errorClosed = false
        var terminationStatus: Int32?
        var terminatedBySignal = false
    }

    public struct LaunchError: Error, CustomStringConvertible {
        public var description: String
    }

    /// - Parameters:
    ///   - environment: the child's whole environment; `nil` inherits this process's.
    public init(
        executable: String,
        arguments: [String] = [],
        environment: [String: String]? = nil,
        workingDirectory: String? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
        self.process = process
    }

    deinit {
        if process.isRunning {
            sendSignal(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Launches the process; output starts filling `standardOutput` and `standardError` at once.
    public func start() throws {
        let outputPipe = Pipe()
        let errorPipe = Pipe()
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        process.standardInput = FileHandle.nullDevice
        let captured = self.captured
        outputPipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            captured.withLock { state in
                if data.isEmpty { state.outputClosed = true } else { state.standardOutput.append(contentsOf: data) }
            }
            if data.isEmpty { handle.readabilityHandler = nil }
        }
        errorPipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            captured.withLock { state in
                if data.isEmpty { state.errorClosed = true } else { state.standardError.append(contentsOf: data) }
            }
            if data.isEmpty { handle.readabilityHandler = nil }
        }
        process.terminationHandler = { process in
            let status = process.terminationStatus
            let bySignal = process.terminationReason == .uncaughtSignal
            captured.withLock { state in
                state.terminationStatus = status
                state.terminatedBySignal = bySignal
            }
        }
        do {
            try process.run()
        } catch {
            throw LaunchError(description: "could not launch \(executable): \(error)")
        }
        // The parent's copies of the write ends must close, or the readers never see end-of-file.
        try? outputPipe.fileHandleForWriting.close()
        try? errorPipe.fileHandleForWriting.close()
    }

    public var processIdentifier: Int32 { process.processIdentifier }

    public var isRunning: Bool { captured.withLock { $0.terminationStatus == nil } && process.isRunning }

    public var standardOutput: String {
        captured.withLock { String(decoding: $0.standardOutput, as: UTF8.self) }
    }

    public var standardError: String {
        captured.withLock { String(decoding: $0.standardError, as: UTF8.self) }
    }

    /// The exit status, or the signal number when `terminatedBySignal`; `nil` while running.
    public var exitCode: Int32? { captured.withLock { $0.terminationStatus } }

    public var terminatedBySignal: Bool { captured.withLock { $0.terminatedBySignal } }

    public func signal(_ signal: Int32) {
        guard process.isRunning else { return }
        sendSignal(process.processIdentifier, signal)
    }

    public func terminate() { signal(SIGTERM) }

    public func kill() { signal(SIGKILL) }

    /// Waits up to `timeout` seconds for the exit and for both pipes to reach end-of-file (so the buffers
    /// hold everything the process wrote). Returns the exit code, or `nil` if it is still running.
    @discardableResult
    public func waitForExit(timeout: Double) async -> Int32? {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            let done = captured.withLock { state in
                state.terminationStatus != nil && state.outputClosed && state.errorClosed
            }
            if done { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return exitCode
    }

    /// Waits up to `timeout` seconds until stdout or stderr contains `text`.
    public func waitForOutput(containing text: String, timeout: Double) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            if standardOutput.contains(text) || standardError.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return standardOutput.contains(text) || standardError.contains(text)
    }
}
