import AgentPorts
internal import CMosquitto
import Logging
import Synchronization

/// State shared by the client object, its network thread and the libmosquitto callbacks.
final class MosquittoClientCore: Sendable {
    let channel: BrokerEventChannel
    let logger: Logger
    let maxQueuedMessages: Int
    private let phaseValue = Atomic<UInt8>(ConnectionPhase.idle.rawValue)
    /// Set by `disconnect`; lets the network thread check for a stop without taking the lock every turn.
    let stopRequested = Atomic<Bool>(false)
    let locked: Mutex<LockedState>

    struct LockedState {
        /// Reused across connections made with equal options, so QoS > 0 messages still unacknowledged
        /// when a connection drops are resent on the next one (libmosquitto keeps them per handle).
        var handle: MosquittoHandle?
        var handleOptions: BrokerConnectOptions?
        var protocolVersion: MQTTProtocolVersion = .v5
        var outstanding = OutstandingMessages()
        var stopDeadline: ContinuousClock.Instant?
        /// The filters of each SUBSCRIBE of this connection not yet answered, by message id: a SUBACK that
        /// refuses some (0x80 and up) is sent again (`MosquittoConnection.retryRefusedSubscriptions`).
        var pendingSubscriptions: [Int32: (filters: [String], qos: Int32)] = [:]
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextWaiterID = 0
        /// Weak: the handler (the agent's publisher) owns the client.
        weak var acknowledgementHandler: (any BrokerAcknowledgementHandler)?
    }

    init(logger: Logger, eventBacklogLimit: Int, eventBacklogBytes: Int, maxQueuedMessages: Int) {
        self.logger = logger
        self.maxQueuedMessages = maxQueuedMessages
        channel = BrokerEventChannel(dataLimit: eventBacklogLimit, byteLimit: eventBacklogBytes)
        locked = Mutex(LockedState())
    }

    var phase: ConnectionPhase {
        ConnectionPhase(rawValue: phaseValue.load(ordering: .acquiring)) ?? .idle
    }

    func setPhase(_ phase: ConnectionPhase) {
        phaseValue.store(phase.rawValue, ordering: .releasing)
    }

    /// Asks the network thread to flush until `deadline`, then DISCONNECT; keeps the earliest deadline.
    func requestStop(deadline: ContinuousClock.Instant, in state: inout LockedState) {
        if let existing = state.stopDeadline, existing <= deadline { return }
        state.stopDeadline = deadline
        stopRequested.store(true, ordering: .releasing)
        // While connected and idle the network thread sleeps up to a second in select()
        // (`MosquittoConnection.idleLoopTimeoutMilliseconds`). Only a queued packet wakes it early — libmosquitto
        // writes its socket pair then, and offers no other way in — so queue the one that changes nothing: an
        // UNSUBSCRIBE of a filter nobody subscribes to (the broker answers UNSUBACK).
        if phase == .connected, let handle = state.handle {
            _ = mosquitto_unsubscribe(handle.pointer, nil, Self.wakeFilter)
        }
    }

    /// The filter of the UNSUBSCRIBE that wakes the network thread for a stop.
    static let wakeFilter = "motion-agent/wake"

    /// The network thread's last act: back to idle, report the outcome, wake `disconnect` callers.
    func connectionFinished(_ event: BrokerEvent) {
        let waiters = locked.withLock { state in
            setPhase(.idle)
            state.stopDeadline = nil
            stopRequested.store(false, ordering: .releasing)
            let waiters = state.waiters.map(\.continuation)
            state.waiters.removeAll()
            return waiters
        }
        channel.yieldControl(event)
        for waiter in waiters { waiter.resume() }
    }

    /// A `disconnect` caller gave up waiting (its bound passed); a no-op if the thread already woke it.
    func abandonWaiter(_ id: Int) {
        let waiter = locked.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }
        waiter?.resume()
    }
}
