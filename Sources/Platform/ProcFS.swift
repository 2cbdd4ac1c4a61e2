import AgentPorts
import Foundation

/// This process's CPU time and resident memory from procfs (proc(5)).
public enum ProcFS {
    /// Reads /proc/self/stat and /proc/self/status; nil where procfs is missing (not Linux).
    public static func processStatistics() -> ProcessStatistics? {
        guard let stat = read("/proc/self/stat"), let status = read("/proc/self/status"),
            let ticks = cpuTicks(stat: stat),
            let rss = residentBytes(status: status)
        else { return nil }
        let hertz = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ProcessStatistics(cpuSeconds: Double(ticks) / (hertz > 0 ? hertz : 100), residentBytes: rss)
    }

    /// procfs files report a size of 0, so they are read to the end rather than by their size.
    private static func read(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// utime + stime (fields 14 and 15 of /proc/PID/stat, in clock ticks). The command name (field 2) is in
    /// parentheses and may itself hold spaces or parentheses, so fields are counted after the last `)`.
    public static func cpuTicks(stat: String) -> UInt64? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After ")": field 3 (state) is fields[0], so field n is fields[n - 3].
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return user + system
    }

    /// `VmRSS:   12345 kB` of /proc/PID/status (the kernel's "kB" is KiB).
    public static func residentBytes(status: String) -> UInt64? {
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let parts = line.dropFirst("VmRSS:".count).split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let value = parts.first.flatMap({ UInt64($0) }) else { return nil }
            return value * 1024
        }
        return nil
    }
}
