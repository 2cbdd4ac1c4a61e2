import AgentPorts
import Synchronization

/// The operating system of a simulated device: a clock whose synchronization the schedule can take away, a
/// service manager that only records what it was told, no process statistics (a simulated process has no CPU
/// of its own), and the boot counter and health file in the simulated state directory.
package final class SimulatedHost: HostSystem, @unchecked Sendable {
    private struct State {
        var synchronized = true
        var notifications: [String] = []
        var health: HealthDocument?
        var files: [String: [UInt8]] = [:]
    }

    private let state = Mutex(State())
    private let directory: SimulatedStateDirectory

    init(directory: SimulatedStateDirectory) {
        self.directory = directory
    }

    package func isClockSynchronized() -> Bool { state.withLock { $0.synchronized } }

    /// Whether the system clock counts as disciplined by a time daemon.
    package func setClockSynchronized(_ synchronized: Bool) { state.withLock { $0.synchronized = synchronized } }

    @discardableResult
    package func notifyServiceManager(_ message: String) -> Bool {
        state.withLock { state in
            // Bounded: only the newest matter to a check.
            if state.notifications.count >= 64 { state.notifications.removeFirst(32) }
            state.notifications.append(message)
        }
        return true
    }

    package var watchdogIntervalSeconds: Double? { nil }

    package func processStatistics() -> ProcessStatistics? { nil }

    package func incrementBootCount() throws -> UInt64 {
        let kept =
            (try? directory.read(.bootCount)).flatMap { $0 }
            .flatMap { UInt64(String(decoding: $0, as: UTF8.self).filter { !$0.isWhitespace }) } ?? 0
        let next = kept + 1
        try directory.replace(.bootCount, with: Array("\(next)\n".utf8))
        return next
    }

    @discardableResult
    package func writeHealth(_ document: HealthDocument) -> Error? {
        state.withLock { $0.health = document }
        return nil
    }

    package var healthPath: String { directory.location(of: .health) }

    package func replaceFile(atPath path: String, with bytes: [UInt8], mode: UInt32) throws(StateFileError) {
        state.withLock { $0.files[path] = bytes }
    }

    /// The health document last written.
    package var health: HealthDocument? { state.withLock { $0.health } }

    /// The bytes the agent last wrote to `path` through `replaceFile` (the Prometheus textfile); nil: never.
    package func replacedFile(atPath path: String) -> [UInt8]? { state.withLock { $0.files[path] } }

    /// What the agent told the service manager, newest last.
    package var notifications: [String] { state.withLock { $0.notifications } }
}
