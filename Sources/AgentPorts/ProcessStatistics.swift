/// This process's CPU time and resident memory, read from procfs (proc(5)).
package struct ProcessStatistics: Sendable, Equatable {
    /// User plus system CPU time since the process started, seconds.
    package var cpuSeconds: Double
    /// Resident set size, bytes.
    package var residentBytes: UInt64

    package init(cpuSeconds: Double, residentBytes: UInt64) {
        self.cpuSeconds = cpuSeconds
        self.residentBytes = residentBytes
    }

    /// The CPU used between two readings as a percentage of one core (200 on two busy cores).
    package static func cpuPercent(
        from earlier: ProcessStatistics,
        to later: ProcessStatistics,
        seconds: Double
    ) -> Double {
        guard seconds > 0 else { return 0 }
        return max(0, later.cpuSeconds - earlier.cpuSeconds) / seconds * 100
    }
}
