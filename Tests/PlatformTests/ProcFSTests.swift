import AgentPorts
import Foundation
import Platform
import Testing

/// procfs parsing for the metrics' CPU and memory figures.
struct ProcFSTests {
    @Test func procfsFieldsAreReadAfterTheCommandName() {
        // A command name with spaces and parentheses must not shift the fields (proc(5): field 2 is "(comm)").
        let stat = "4242 (motion (agent) x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 9 0 1000 0 0"
        #expect(ProcFS.cpuTicks(stat: stat) == 325)
        #expect(
            ProcFS.residentBytes(status: "Name:\tmotion-agent\nVmRSS:\t   39200 kB\nThreads:\t9\n") == 39200
                * 1024
        )
        #expect(ProcFS.residentBytes(status: "Name:\tx\n") == nil)
    }

    @Test func thisProcessHasCPUTimeAndResidentMemory() throws {
        let stats = try #require(ProcFS.processStatistics())
        #expect(stats.residentBytes > 1 << 20, "a Swift test process holds more than 1 MiB")
        #expect(stats.cpuSeconds > 0)
        let later = ProcessStatistics(cpuSeconds: stats.cpuSeconds + 0.5, residentBytes: stats.residentBytes)
        #expect(abs(ProcessStatistics.cpuPercent(from: stats, to: later, seconds: 2) - 25) < 1e-9)
    }

    @Test func aProcessTreeHoldsTheRootAndItsChildrenButNotItsParent() throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        try child.run()
        defer { child.terminate() }
        let me = getpid()
        let tree = ProcFS.processTree([me])
        #expect(tree.first == me)
        #expect(tree.contains(child.processIdentifier))
        #expect(!tree.contains(getppid()))
        #expect(ProcFS.processIdentifiers().contains(me))
        #expect(ProcFS.processTree([child.processIdentifier]) == [child.processIdentifier])
    }
}
