import Synchronization

/// The server process of each running node of a cluster, by node index: what `NATSCluster` and
/// `RabbitMQCluster` both keep, and ask the same questions of.
final class NodeProcesses: Sendable {
    private let running = Mutex<[Int: ProcessRunner]>([:])

    func isRunning(_ index: Int) -> Bool { running.withLock { $0[index]?.isRunning ?? false } }

    /// The running nodes' server processes, in node order.
    var processIdentifiers: [Int32] {
        running.withLock { running in
            running.keys.sorted().compactMap { running[$0] }.filter(\.isRunning).map(\.processIdentifier)
        }
    }

    func started(_ process: ProcessRunner, node index: Int) { running.withLock { $0[index] = process } }

    /// Forgets the node's process and hands it over, to be stopped; nil when the node was not running.
    func take(node index: Int) -> ProcessRunner? { running.withLock { $0.removeValue(forKey: index) } }

    /// SIGKILL to every node still running (a deinit's last resort).
    func killAll() {
        for process in running.withLock({ Array($0.values) }) where process.isRunning { process.kill() }
    }
}
