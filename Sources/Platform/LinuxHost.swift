import AgentPorts

/// The agent's `HostSystem` on Linux: adjtimex(2) for the clock, sd_notify(3) for systemd, procfs for CPU
/// and memory, and the boot counter and health file in the state directory.
public struct LinuxHost: HostSystem {
    public let stateDirectory: String
    private let systemd: SystemdNotifier
    private let health: HealthFile

    public init(stateDirectory: String, environment: [String: String]? = nil) {
        self.stateDirectory = stateDirectory
        systemd = environment.map { SystemdNotifier(environment: $0) } ?? SystemdNotifier()
        health = HealthFile(stateDirectory: stateDirectory)
    }

    public func isClockSynchronized() -> Bool { ClockSynchronization.isSynchronized() }

    @discardableResult
    public func notifyServiceManager(_ state: String) -> Bool { systemd.notify(state) }

    public var watchdogIntervalSeconds: Double? { systemd.watchdogInterval }

    public func processStatistics() -> ProcessStatistics? { ProcFS.processStatistics() }

    public func incrementBootCount() throws -> UInt64 { try BootCounter.increment(in: stateDirectory) }

    @discardableResult
    public func writeHealth(_ document: HealthDocument) -> Error? { health.write(document) }

    public var healthPath: String { health.path }
}
