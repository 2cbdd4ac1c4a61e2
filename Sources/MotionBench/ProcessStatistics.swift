import ArgumentParser
import CBenchSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What /proc tells about a measured process: CPU time, resident memory, and finding a process by its command
/// line (the agent inside the fake IIO tree is a grandchild of the bench).
enum ProcessStatistics {
    /// utime + stime of `pid`, clock ticks (/proc/PID/stat fields 14 and 15); 0 once the process is gone.
    static func cpuTicks(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // Fields after the command name start at field 3 (state).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return user + system
    }

    static var ticksPerSecond: Double { Double(sysconf(Int32(_SC_CLK_TCK))) }

    /// CPU % of one core between two `cpuTicks` readings `seconds` apart.
    static func cpuPercent(from start: Int, to end: Int, over seconds: Double) -> Double {
        100 * Double(end - start) / ticksPerSecond / seconds
    }

    static func residentKiB(_ pid: Int32) -> Int { statusField(pid, "VmRSS:") }

    /// Proportional set size (/proc/PID/smaps_rollup `Pss:`), KiB: pages shared by N processes (the binary, the
    /// libraries) count 1/N to each, so the sum over many agents is what they really occupy.
    static func proportionalKiB(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("Pss:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// MemAvailable of /proc/meminfo, KiB: what the machine can still give without swapping.
    static func availableKiB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("MemAvailable:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// A "kB" field of /proc/PID/status.
    static func statusField(_ pid: Int32, _ name: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// The pid of the process whose command line is exactly `arguments`, waiting for it to appear.
    static func findProcess(arguments: [String], timeout: Double) throws -> pid_t {
        let wanted = arguments.joined(separator: "\0") + "\0"
        let deadline = bench_monotonic_ns() + UInt64(timeout * 1e9)
        while bench_monotonic_ns() < deadline {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = Int32(entry),
                    let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                    String(decoding: data, as: UTF8.self) == wanted
                else { continue }
                return pid
            }
            usleep(50_000)
        }
        throw ValidationError("\(arguments.joined(separator: " ")) did not start within \(Int(timeout)) s")
    }
}
