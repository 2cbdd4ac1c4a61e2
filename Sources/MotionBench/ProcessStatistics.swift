import ArgumentParser
import CBenchSupport
import Foundation
import Platform

#if canImport(Glibc)
import Glibc
#endif

/// What /proc tells the benchmarks about a measured process (Platform's `ProcFS` reads it): CPU time, resident
/// memory, and finding a process by its command line (the agent inside the fake IIO tree is a grandchild of the
/// bench).
enum ProcessStatistics {
    /// utime + stime of `pid`, clock ticks; 0 once the process is gone.
    static func cpuTicks(_ pid: Int32) -> Int { ProcFS.cpuTicks(pid: pid).map { Int($0) } ?? 0 }

    static var ticksPerSecond: Double { ProcFS.ticksPerSecond }

    /// CPU % of one core between two `cpuTicks` readings `seconds` apart.
    static func cpuPercent(from start: Int, to end: Int, over seconds: Double) -> Double {
        100 * Double(end - start) / ticksPerSecond / seconds
    }

    static func residentKiB(_ pid: Int32) -> Int { statusField(pid, "VmRSS:") }

    /// Proportional set size, KiB (`ProcFS.proportionalKiB`).
    static func proportionalKiB(_ pid: Int32) -> Int { ProcFS.proportionalKiB(pid: pid).map { Int($0) } ?? 0 }

    /// MemAvailable, KiB.
    static func availableKiB() -> Int { ProcFS.availableKiB().map { Int($0) } ?? 0 }

    /// A "kB" field of /proc/PID/status.
    static func statusField(_ pid: Int32, _ name: String) -> Int {
        ProcFS.statusKiB(pid: pid, name).map { Int($0) } ?? 0
    }

    /// `roots` and all their descendants now: a broker whose server is a script that starts its VM as a child
    /// (rabbitmq-server) is measured whole.
    static func tree(_ roots: [Int32]) -> [Int32] { ProcFS.processTree(roots) }

    /// The pid of the process whose command line is exactly `arguments`, waiting for it to appear.
    static func findProcess(arguments: [String], timeout: Double) throws -> pid_t {
        let wanted = arguments.joined(separator: "\0") + "\0"
        let deadline = bench_monotonic_ns() + UInt64(timeout * 1e9)
        while bench_monotonic_ns() < deadline {
            for pid in ProcFS.processIdentifiers() where ProcFS.commandLine(pid: String(pid)) == wanted {
                return pid
            }
            usleep(50_000)
        }
        throw ValidationError("\(arguments.joined(separator: " ")) did not start within \(Int(timeout)) s")
    }
}
