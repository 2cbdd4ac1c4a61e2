import AgentPorts
import MosquittoTransport
import Synchronization
import TestSupport

/// Records every event a client reports, and every acknowledgement its network thread hands over, for
/// bounded waits in tests.
final class EventLog: Sendable {
    private let recorded = Recorded()
    let acknowledgements = AcknowledgementRecorder()
    private let pump: Task<Void, Never>

    private final class Recorded: Sendable {
        let events = Mutex<[BrokerEvent]>([])
        let messages = Atomic<Int>(0)
    }

    struct Timeout: Error, CustomStringConvertible {
        var description: String
    }

    /// - Parameter keepsMessages: false counts inbound messages without keeping them (floods).
    init(_ client: MosquittoClient, keepsMessages: Bool = true) {
        let recorded = self.recorded
        let stream = client.events
        client.setAcknowledgementHandler(acknowledgements)
        pump = Task {
            for await event in stream {
                if case .message = event {
                    recorded.messages.add(1, ordering: .relaxed)
                    if !keepsMessages { continue }
                }
                recorded.events.withLock { $0.append(event) }
            }
        }
    }

    /// Inbound messages received so far, kept or not.
    var messageCount: Int { recorded.messages.load(ordering: .relaxed) }

    deinit { pump.cancel() }

    var all: [BrokerEvent] { recorded.events.withLock { $0 } }

    /// Connection events only (no messages).
    var connectionEvents: [BrokerEvent] {
        all.filter {
            switch $0 {
            case .message: false
            default: true
            }
        }
    }

    /// Waits at most `timeout` seconds until `count` acknowledged ids satisfy `predicate`.
    func waitForAcknowledgements(
        _ what: String,
        count: Int,
        timeout: Double = 10,
        _ predicate: @Sendable (Int32) -> Bool = { _ in true }
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while acknowledgements.acknowledged.filter(predicate).count < count {
            guard ContinuousClock.now < deadline else {
                throw Timeout(
                    description: "waited \(timeout) s for \(what); \(acknowledgements.acknowledged.count) acknowledged"
                )
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits at most `timeout` seconds until `count` recorded events satisfy `predicate`; returns the first.
    @discardableResult
    func waitFor(
        _ what: String,
        count: Int = 1,
        timeout: Double = 10,
        _ predicate: @Sendable (BrokerEvent) -> Bool
    ) async throws -> BrokerEvent {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while true {
            let matches = all.filter(predicate)
            if matches.count >= count { return matches[0] }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw Timeout(description: "waited \(timeout) s for \(what); events: \(connectionEvents), \(all.count) in all")
    }

    @discardableResult
    func waitForConnected(timeout: Double = 10) async throws -> Bool {
        let event = try await waitFor("connected or connectFailed", timeout: timeout) {
            switch $0 {
            case .connected, .connectFailed: true
            default: false
            }
        }
        if case .connected(let sessionPresent) = event { return sessionPresent }
        throw Timeout(description: "expected .connected, got \(event)")
    }

    func waitForTerminal(timeout: Double = 10) async throws -> BrokerEvent {
        try await waitFor("connectFailed or disconnected", timeout: timeout) {
            switch $0 {
            case .connectFailed, .disconnected: true
            default: false
            }
        }
    }
}
