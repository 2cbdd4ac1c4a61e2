import Synchronization

/// Connections made and failed, counted by the connection supervisor and read by the metrics report.
public final class ConnectionCounters: Sendable {
    private let connects = Atomic<UInt64>(0)
    private let failures = Atomic<UInt64>(0)

    public init() {}

    /// A CONNACK was received.
    public func connected() { connects.add(1, ordering: .relaxed) }
    /// A connection attempt failed (refused, unreachable, timed out).
    public func connectFailed() { failures.add(1, ordering: .relaxed) }

    /// Connections after the first: each one follows a loss.
    public var reconnects: UInt64 { max(connects.load(ordering: .relaxed), 1) - 1 }
    public var connectionFailures: UInt64 { failures.load(ordering: .relaxed) }
}
