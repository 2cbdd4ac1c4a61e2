/// What the agent needs from the operating system besides sensors and the broker: the clock's
/// synchronization, the service manager (systemd's notify socket and watchdog), the process's own CPU and
/// memory, the boot counter and the health file of the state directory.
///
/// Platform's `LinuxHost` is the implementation; keeping it a port keeps the core free of C shims and
/// lets tests run the agent's services on a host they control.
package protocol HostSystem: Sendable {
    /// Whether the system clock is disciplined by a time daemon (NTP, chrony, PTP): boards without a
    /// real-time clock boot in 1970, and consumers and the command age check need to know.
    func isClockSynchronized() -> Bool
    /// Tells the service manager the agent's state (`READY=1`, `WATCHDOG=1`, `STOPPING=1`, `STATUS=…`);
    /// false when there is none or the message could not be sent.
    @discardableResult
    func notifyServiceManager(_ state: String) -> Bool
    /// How often the service manager expects a `WATCHDOG=1`, seconds; nil without a watchdog.
    var watchdogIntervalSeconds: Double? { get }
    /// This process's CPU time and resident memory; nil where the system cannot say.
    func processStatistics() -> ProcessStatistics?
    /// Counts this start in the state directory and returns the new count (1 on the first start).
    func incrementBootCount() throws -> UInt64
    /// Replaces the health file; the failure is returned, not thrown: health reporting never stops the agent.
    @discardableResult
    func writeHealth(_ document: HealthDocument) -> Error?
    /// Where the health file is, for log lines.
    var healthPath: String { get }
    /// Replaces a file outside the state directory (the Prometheus textfile) atomically, never through a planted
    /// symbolic link; `mode` applies to the new file.
    func replaceFile(atPath path: String, with bytes: [UInt8], mode: UInt32) throws(StateFileError)
}
