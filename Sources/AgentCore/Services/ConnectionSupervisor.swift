import AgentPorts
import Foundation
import Logging

/// The connection's decisions, and nothing else: which act follows each connection event. Birth after every
/// CONNACK; after a failure or a loss a jittered exponential back-off (a long one for refused credentials);
/// at shutdown the goodbye and the disconnect, and no reconnect after that. It does no I/O and never sleeps:
/// it reads the injected clock and returns actions, which `ConnectionSupervisorService` performs — so tests
/// drive it with a manual clock.
public struct ConnectionSupervisor<C: Clock>: Sendable where C.Duration == Duration {
    public enum Event: Sendable, Equatable {
        /// The agent booted: make the first attempt.
        case start
        case connected(sessionPresent: Bool)
        case connectFailed(reason: String, isAuthorization: Bool)
        case disconnected(reason: String, expected: Bool)
        /// A `wait` deadline may have passed (early ticks are ignored).
        case tick
        /// The outbox has drained: say goodbye and leave.
        case shutdown
    }

    public enum Action: Sendable, Equatable {
        /// Start one connection attempt.
        case connect
        case writeHealth(HealthDocument.State, lastError: String?, failures: Int, retryIn: Double?)
        case log(Logger.Level, String)
        /// The retained online status, first after CONNACK.
        case publishBirth
        case subscribeControl
        /// The probe that marks the end of the retained desired documents (`ControlPlane.beginDesiredSnapshot`);
        /// after the birth, so the birth shows the state the device ran while it was away.
        case probeDesiredState
        case setPublisherConnected(Bool)
        /// Count the connection and announce what follows one (Home Assistant discovery).
        case reportConnected
        case reportConnectFailed
        /// Send `.tick` at (or after) this instant.
        case wait(until: C.Instant)
        /// The retained offline status, reason "shutdown" (only while connected).
        case publishGoodbye
        /// DISCONNECT after flushing; the supervisor is done.
        case disconnect
    }

    public enum Phase: Sendable, Equatable {
        case idle
        case connecting
        case connected
        case waiting(until: C.Instant)
        case stopped
    }

    public private(set) var phase = Phase.idle
    /// Attempts that failed since the last CONNACK.
    public private(set) var failures = 0
    private var backoff: Backoff
    private let clock: C

    public init(clock: C, backoff: Backoff) {
        self.clock = clock
        self.backoff = backoff
    }

    public mutating func handle(_ event: Event) -> [Action] {
        if phase == .stopped {
            // After the goodbye only the end of the connection matters, and it is not followed by a retry.
            switch event {
            case .connected, .connectFailed, .disconnected: return [.setPublisherConnected(false)]
            case .start, .tick, .shutdown: return []
            }
        }
        switch event {
        case .start:
            guard phase == .idle else { return [] }
            phase = .connecting
            return [.writeHealth(.connecting, lastError: nil, failures: 0, retryIn: nil), .connect]
        case .connected(let sessionPresent):
            phase = .connected
            backoff.reset()
            failures = 0
            return [
                .writeHealth(.connected, lastError: nil, failures: 0, retryIn: nil),
                .log(.info, "connected to the broker (session present: \(sessionPresent))"),
                // Subscribed before the birth: whoever acts on the birth finds the device listening (the
                // broker handles one client's packets in order).
                .subscribeControl,
                .publishBirth,
                .probeDesiredState,
                .setPublisherConnected(true),
                .reportConnected,
            ]
        case .connectFailed(let reason, let isAuthorization):
            // Refused credentials will not fix themselves in a second: wait long, and say so.
            let delay = isAuthorization ? max(60, backoff.next()) : backoff.next()
            failures += 1
            // The reason names the fix already (MosquittoReasons: the user, the password file, the client id).
            return [
                .reportConnectFailed,
                .setPublisherConnected(false),
                .writeHealth(
                    isAuthorization ? .refused : .connecting,
                    lastError: reason,
                    failures: failures,
                    retryIn: delay
                ),
                .log(.error, "\(reason) — retrying in \(Self.seconds(delay)) s"),
                wait(delay),
            ]
        case .disconnected(let reason, let expected):
            guard !expected else {
                phase = .idle
                return [.setPublisherConnected(false)]
            }
            let delay = backoff.next()
            return [
                .setPublisherConnected(false),
                .writeHealth(
                    .connecting,
                    lastError: "connection to the broker lost: \(reason)",
                    failures: failures,
                    retryIn: delay
                ),
                .log(.warning, "connection to the broker lost: \(reason) — reconnecting in \(Self.seconds(delay)) s"),
                wait(delay),
            ]
        case .tick:
            guard case .waiting(let deadline) = phase, clock.now >= deadline else { return [] }
            phase = .connecting
            return [.connect]
        case .shutdown:
            let wasConnected = phase == .connected
            phase = .stopped
            return wasConnected ? [.publishGoodbye, .disconnect] : [.disconnect]
        }
    }

    private mutating func wait(_ seconds: Double) -> Action {
        let deadline = clock.now.advanced(by: .milliseconds(Int64((seconds * 1000).rounded())))
        phase = .waiting(until: deadline)
        return .wait(until: deadline)
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.1f", value) }
}
