import AgentPorts

#if canImport(Glibc)
import Glibc
#endif

/// The agent's `HostSystem` on Linux: adjtimex(2) for the clock, sd_notify(3) for systemd, procfs for CPU
/// and memory, and the boot counter and health file in the state directory.
package struct LinuxHost: HostSystem {
    package let state: any StateDirectory
    private let systemd: SystemdNotifier
    private let health: HealthFile

    package init(state: any StateDirectory, environment: [String: String]? = nil) {
        self.state = state
        systemd = environment.map { SystemdNotifier(environment: $0) } ?? SystemdNotifier()
        health = HealthFile(state: state)
    }

    package func isClockSynchronized() -> Bool { ClockSynchronization.isSynchronized() }

    @discardableResult
    package func notifyServiceManager(_ state: String) -> Bool { systemd.notify(state) }

    package var watchdogIntervalSeconds: Double? { systemd.watchdogInterval }

    package func processStatistics() -> ProcessStatistics? { ProcFS.processStatistics() }

    package func incrementBootCount() throws -> UInt64 { try BootCounter.increment(in: state) }

    @discardableResult
    package func writeHealth(_ document: HealthDocument) -> Error? { health.write(document) }

    package var healthPath: String { health.path }

    package func replaceFile(atPath path: String, with bytes: [UInt8], mode: UInt32) throws(StateFileError) {
        try AtomicFile.write(bytes, to: path, mode: mode_t(mode))
    }
}
