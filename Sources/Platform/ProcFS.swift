import AgentPorts
import Foundation

/// CPU time and memory from procfs (proc(5)): the agent's own (its metrics), and other processes' for the
/// benchmarks and the test harness — the one reader of /proc in the project.
package enum ProcFS {
    /// The clock ticks per second of /proc/PID/stat's times.
    package static var ticksPerSecond: Double {
        let hertz = Double(sysconf(Int32(_SC_CLK_TCK)))
        return hertz > 0 ? hertz : 100
    }

    /// Reads /proc/PID/stat and /proc/PID/status (`self` for this process); nil where procfs is missing (not
    /// Linux) or the process is gone.
    package static func processStatistics(pid: String = "self") -> ProcessStatistics? {
        guard let stat = read("/proc/\(pid)/stat"), let status = read("/proc/\(pid)/status"),
            let ticks = cpuTicks(stat: stat),
            let rss = residentBytes(status: status)
        else { return nil }
        return ProcessStatistics(cpuSeconds: Double(ticks) / ticksPerSecond, residentBytes: rss)
    }

    /// utime + stime of process `pid`, clock ticks; nil once it is gone.
    package static func cpuTicks(pid: Int32) -> UInt64? { read("/proc/\(pid)/stat").flatMap { cpuTicks(stat: $0) } }

    /// A "kB" line of /proc/PID/status (`VmRSS:`, `VmHWM:`), KiB; nil when missing.
    package static func statusKiB(pid: Int32, _ name: String) -> UInt64? {
        read("/proc/\(pid)/status").flatMap { kibField($0, name) }
    }

    /// Proportional set size (/proc/PID/smaps_rollup `Pss:`), KiB: pages shared by N processes (the binary, the
    /// libraries) count 1/N to each, so the sum over many processes is what they really occupy.
    package static func proportionalKiB(pid: Int32) -> UInt64? {
        read("/proc/\(pid)/smaps_rollup").flatMap { kibField($0, "Pss:") }
    }

    /// MemAvailable of /proc/meminfo, KiB: what the machine can still give without swapping.
    package static func availableKiB() -> UInt64? { read("/proc/meminfo").flatMap { kibField($0, "MemAvailable:") } }

    /// The state letter of process `pid` (/proc/PID/stat field 3: `R`, `S`, `T` stopped…); nil once it is gone.
    package static func state(pid: Int32) -> Character? {
        guard let stat = read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }

    /// A numeric line of /proc/PID/status (`Threads:`, or a "kB" one in KiB); nil when missing.
    package static func statusValue(pid: Int32, _ name: String) -> UInt64? { statusKiB(pid: pid, name) }

    /// Every process now, by /proc's numeric entries.
    package static func processIdentifiers() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
    }

    /// `roots` and all their descendants now (by /proc/PID/status's `PPid:`).
    package static func processTree(_ roots: [Int32]) -> [Int32] {
        var children: [Int32: [Int32]] = [:]
        for pid in processIdentifiers() {
            guard let parent = statusValue(pid: pid, "PPid:") else { continue }
            children[Int32(parent), default: []].append(pid)
        }
        var found: [Int32] = []
        var pending = roots
        while let pid = pending.popLast() {
            found.append(pid)
            pending += children[pid] ?? []
        }
        return found
    }

    /// The command line of process `pid` (NUL-separated arguments), or nil.
    package static func commandLine(pid: String) -> String? { read("/proc/\(pid)/cmdline") }

    /// The value of the first line starting with `name` in a procfs "name: value kB" file.
    static func kibField(_ text: String, _ name: String) -> UInt64? {
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            let parts = line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" })
            return parts.first.flatMap { UInt64($0) }
        }
        return nil
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
    package static func cpuTicks(stat: String) -> UInt64? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After ")": field 3 (state) is fields[0], so field n is fields[n - 3].
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return user + system
    }

    /// `VmRSS:   12345 kB` of /proc/PID/status (the kernel's "kB" is KiB).
    package static func residentBytes(status: String) -> UInt64? { kibField(status, "VmRSS:").map { $0 * 1024 } }
}
