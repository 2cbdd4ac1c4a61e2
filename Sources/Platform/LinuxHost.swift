import AgentPorts

#if canImport(Glibc)
import Glibc
#endif

/// The agent's `HostSystem` on Linux: adjtimex(2) for the clock, sd_notify(3) for systemd, procfs for CPU
/// and memory, and the boot counter and health file in the state directory.
public struct LinuxHost: HostSystem {
    public let state: any StateDirectory
    private let systemd: SystemdNotifier
    private let health: HealthFile

    public init(state: any StateDirectory, environment: [String: String]? = nil) {
        self.state = state
        systemd = environment.map { SystemdNotifier(environment: $0) } ?? SystemdNotifier()
        health = HealthFile(state: state)
    }

    public func isClockSynchronized() -> Bool { ClockSynchronization.isSynchronized() }

    @discardableResult
    public func notifyServiceManager(_ state: String) -> Bool { systemd.notify(state) }

    public var watchdogIntervalSeconds: Double? { systemd.watchdogInterval }

    public func processStatistics() -> ProcessStatistics? { ProcFS.processStatistics() }

    public func incrementBootCount() throws -> UInt64 { try BootCounter.increment(in: state) }

    @discardableResult
    public func writeHealth(_ document: HealthDocument) -> Error? { health.write(document) }

    public var healthPath: String { health.path }

    public func replaceFile(atPath path: String, with bytes: [UInt8], mode: UInt32) throws(StateFileError) {
        try AtomicFile.write(bytes, to: path, mode: mode_t(mode))
    }
}
