import Platform

/// What one agent's start cost, read from /proc as soon as the bench heard its first online status (its birth):
/// the CPU time it had used (utime + stime, clock ticks: 10 ms resolution, so figures are read over many agents),
/// its threads, and the wall time from spawn to the birth heard (the bench polls, so up to one poll late).
struct AgentStartUpCost {
    var cpuSeconds: Double
    var threads: Int
    var spawnToBirthMilliseconds: Double

    /// Reads `pid` now; nil when the process is gone.
    static func read(pid: Int32, spawnedAt: UInt64, now: UInt64) -> AgentStartUpCost? {
        guard let ticks = ProcFS.cpuTicks(pid: pid), let threads = ProcFS.statusValue(pid: pid, "Threads:") else {
            return nil
        }
        return AgentStartUpCost(
            cpuSeconds: Double(ticks) / ProcFS.ticksPerSecond,
            threads: Int(threads),
            spawnToBirthMilliseconds: Double(now - spawnedAt) / 1e6
        )
    }

    /// The bench's rows for `costs` (one per agent measured).
    static func rows(_ costs: [AgentStartUpCost], rate: Double, wallSeconds: Double) -> [BenchRow] {
        func summary(_ values: [Double], _ format: String) -> String {
            let sorted = values.sorted()
            let mean = values.reduce(0, +) / Double(max(1, values.count))
            return String(
                format: "mean \(format), p50 \(format), p99 \(format), max \(format) (n %d)",
                mean,
                Statistics.percentile(sorted, 50),
                Statistics.percentile(sorted, 99),
                sorted.last ?? .nan,
                sorted.count
            )
        }
        return [
            BenchRow(
                name: "start-up, paced at \(String(format: "%g", rate))/s: all born after (s)",
                value: String(format: "%.1f", wallSeconds)
            ),
            BenchRow(
                name: "start-up: CPU until birth (ms)",
                value: summary(costs.map { $0.cpuSeconds * 1000 }, "%.0f")
            ),
            BenchRow(name: "start-up: threads at birth", value: summary(costs.map { Double($0.threads) }, "%.0f")),
            BenchRow(
                name: "start-up: spawn → birth heard (ms)",
                value: summary(costs.map(\.spawnToBirthMilliseconds), "%.0f")
            ),
        ]
    }
}
