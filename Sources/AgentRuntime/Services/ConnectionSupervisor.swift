import AgentConfig
import AgentPorts
import Foundation
import Logging
import MotionWire

/// The connection's decisions, and nothing else: which act follows each connection event. Birth after every
/// CONNACK; after a failure or a loss a jittered exponential back-off (a long one for refused credentials)
/// and, with several servers, the next server; with `mqtt.protocol: auto`, MQTT 3.1.1 for a server that
/// refused MQTT 5; at shutdown the goodbye and the disconnect, and no reconnect after that. It does no I/O and never sleeps:
/// it reads the injected clock and returns actions, which `ConnectionSupervisorService` performs — so tests
/// drive it with a manual clock.
package struct ConnectionSupervisor<C: Clock>: Sendable where C.Duration == Duration {
    package enum Event: Sendable, Equatable {
        /// The agent booted: make the first attempt.
        case start
        case connected(sessionPresent: Bool)
        case connectFailed(reason: String, isAuthorization: Bool)
        /// The server answered the CONNECT with "unsupported protocol version".
        case protocolRefused(reason: String)
        case disconnected(reason: String, expected: Bool)
        /// The broker named other servers (MQTT 5 Server Reference, before the attempt's end): `servers` as
        /// `host:port`, in the broker's order (empty when `written` holds no address). The next attempt goes to
        /// the first of them that config.yaml names; one it does not name is ignored.
        case serverReference(servers: [String], written: String)
        /// A `wait` deadline may have passed (early ticks are ignored).
        case tick
        /// The outbox has drained: say goodbye and leave.
        case shutdown
        /// The session ends the connection itself and comes back (Sparkplug: its primary host went offline): back
        /// off, then connect again — to the next server when `nextServer`.
        case leave(reason: String, nextServer: Bool)
    }

    package enum Action: Sendable, Equatable {
        /// Start one connection attempt, to `server` with `protocolVersion`.
        case connect
        case writeHealth(HealthDocument.State, lastError: String?, failures: Int, retryIn: Double?)
        case log(Logger.Level, String)
        /// The retained online status, first after CONNACK.
        case publishBirth
        case subscribeControl
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
        /// DISCONNECT now, to connect again after the wait that follows (`leave`).
        case closeConnection
    }

    package enum Phase: Sendable, Equatable {
        case idle
        case connecting
        case connected
        case waiting(until: C.Instant)
        case stopped
    }

    package private(set) var phase = Phase.idle
    /// Attempts that failed since the last CONNACK.
    package private(set) var failures = 0
    /// The servers' names (`host:port`), in failover order: config.yaml's, and only those. A broker's Server
    /// Reference may choose among them, never add one: a server named by whoever answers on the network would
    /// receive the device's credentials (issue 27).
    package let servers: [String]
    /// The server a broker referred the agent to, an index into `servers`: the next attempt goes there.
    private var referredServer: Int?
    /// The server the current or next attempt goes to, an index into `servers`.
    package private(set) var server: Int
    /// Moves to the next server so far.
    package private(set) var failovers = 0
    /// Per server: the protocol the next attempt speaks.
    private var protocols: [MQTTProtocolVersion]
    /// Per server: fell back to MQTT 3.1.1 and no CONNACK has confirmed it yet.
    private var unconfirmedFallback: [Bool]
    private let protocolFallback: Bool
    private var backoff: Backoff
    private let clock: C

    /// - Parameters:
    ///   - servers: at least one; the first attempt goes to `servers[firstServer]`.
    ///   - protocolVersion: the first protocol tried on every server.
    ///   - protocolFallback: a server that refuses MQTT 5 is retried, at once, with MQTT 3.1.1.
    package init(
        clock: C,
        backoff: Backoff,
        servers: [String] = ["the broker"],
        firstServer: Int = 0,
        protocolVersion: MQTTProtocolVersion = .v5,
        protocolFallback: Bool = false
    ) {
        self.clock = clock
        self.backoff = backoff
        self.servers = servers.isEmpty ? ["the broker"] : servers
        server = min(max(0, firstServer), self.servers.count - 1)
        protocols = Array(repeating: protocolVersion, count: self.servers.count)
        unconfirmedFallback = Array(repeating: false, count: self.servers.count)
        self.protocolFallback = protocolFallback
    }

    /// The protocol the current or next attempt speaks.
    package var protocolVersion: MQTTProtocolVersion { protocols[server] }

    package mutating func handle(_ event: Event) -> [Action] {
        if phase == .stopped {
            // After the goodbye only the end of the connection matters, and it is not followed by a retry.
            switch event {
            case .connected, .connectFailed, .protocolRefused, .disconnected: return [.setPublisherConnected(false)]
            case .start, .tick, .shutdown, .serverReference, .leave: return []
            }
        }
        switch event {
        case .start:
            guard phase == .idle else { return [] }
            phase = .connecting
            return [.writeHealth(.connecting, lastError: nil, failures: 0, retryIn: nil), .connect]
        case .connected(let sessionPresent):
            phase = .connected
            unconfirmedFallback[server] = false
            backoff.reset()
            failures = 0
            let named = servers.count > 1 ? " \(servers[server])" : ""
            return [
                .writeHealth(.connected, lastError: nil, failures: 0, retryIn: nil),
                .log(.info, "connected to the broker\(named) (session present: \(sessionPresent))"),
                // Subscribed before the birth: whoever acts on the birth finds the device listening (the
                // broker handles one client's packets in order).
                .subscribeControl,
                .publishBirth,
                .setPublisherConnected(true),
                .reportConnected,
            ]
        case .protocolRefused(let reason):
            guard protocolFallback, protocols[server] == .v5 else {
                return handle(.connectFailed(reason: reason, isAuthorization: false))
            }
            // Not a failure of the server: it speaks the older protocol. Ask again at once, in that one.
            protocols[server] = .v311
            unconfirmedFallback[server] = true
            phase = .connecting
            return [
                .log(
                    .warning,
                    "\(servers[server]) refused MQTT 5 (\(reason)) — speaking MQTT 3.1.1 to it from now on "
                        + "(mqtt.protocol: auto): no message expiry, response topics or reason codes there"
                ),
                .connect,
            ]
        case .connectFailed(let reason, let isAuthorization):
            // Refused credentials will not fix themselves in a second: wait long, and say so.
            let delay = isAuthorization ? max(60, backoff.next()) : backoff.next()
            failures += 1
            revertUnconfirmedFallback()
            let next = failOver()
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
                .log(.error, "\(reason) — \(next ?? "retrying") in \(Self.seconds(delay)) s"),
                wait(delay),
            ]
        case .disconnected(let reason, let expected):
            if case .waiting = phase {
                // The end of a connection already left (`leave`): the wait and the server are decided.
                return [.setPublisherConnected(false)]
            }
            guard !expected else {
                phase = .idle
                return [.setPublisherConnected(false)]
            }
            let delay = backoff.next()
            let next = failOver()
            return [
                .setPublisherConnected(false),
                .writeHealth(
                    .connecting,
                    lastError: "connection to the broker lost: \(reason)",
                    failures: failures,
                    retryIn: delay
                ),
                .log(
                    .warning,
                    "connection to the broker lost: \(reason) — \(next ?? "reconnecting") in \(Self.seconds(delay)) s"
                ),
                wait(delay),
            ]
        case .serverReference(let named, let written):
            let shown = "\"\(Printable.text(written))\""
            guard !named.isEmpty else {
                return [
                    .log(
                        .warning,
                        "the broker referred the agent to \(shown) (MQTT 5 Server Reference), which is not a host or host:port — ignored"
                    )
                ]
            }
            let configured = servers.map { $0.lowercased() }
            let known = named.lazy.compactMap { configured.firstIndex(of: $0.lowercased()) }.first
            guard let index = known else {
                return [
                    .log(
                        .warning,
                        "the broker referred the agent to \(shown) (MQTT 5 Server Reference), which is not in mqtt.servers (or mqtt.host) — ignored: the agent sends its credentials only to the brokers config.yaml names; add the server to mqtt.servers if it is yours"
                    )
                ]
            }
            referredServer = index
            return []
        case .tick:
            guard case .waiting(let deadline) = phase, clock.now >= deadline else { return [] }
            phase = .connecting
            return [.connect]
        case .shutdown:
            let wasConnected = phase == .connected
            phase = .stopped
            return wasConnected ? [.publishGoodbye, .disconnect] : [.disconnect]
        case .leave(let reason, let nextServer):
            guard phase == .connected || phase == .connecting else { return [] }
            let delay = backoff.next()
            let next = nextServer ? failOver() : nil
            return [
                .closeConnection,
                .writeHealth(.connecting, lastError: reason, failures: failures, retryIn: delay),
                .log(.warning, "\(reason) — \(next ?? "reconnecting") in \(Self.seconds(delay)) s"),
                wait(delay),
            ]
        }
    }

    /// The supervisor's event for what a client reported; nil for a message (the session's, not the
    /// connection's). `defaultPort`: the port of a Server Reference's address that names none.
    package static func event(for brokerEvent: BrokerEvent, defaultPort: Int) -> Event? {
        switch brokerEvent {
        case .message: return nil
        case .connected(let sessionPresent): return .connected(sessionPresent: sessionPresent)
        case .connectFailed(let code, let reason, let isAuthorization):
            // 0x84 Unsupported Protocol Version (MQTT 5), which libmosquitto also reports for a 3.1.1 broker's
            // CONNACK 1 "unacceptable protocol version" to a version-5 CONNECT.
            return code == 0x84
                ? .protocolRefused(reason: reason) : .connectFailed(reason: reason, isAuthorization: isAuthorization)
        case .disconnected(let reason, let expected): return .disconnected(reason: reason, expected: expected)
        case .serverReference(let written):
            return .serverReference(servers: referredServers(written, defaultPort: defaultPort), written: written)
        }
    }

    /// A server that refused MQTT 5 and then failed the 3.1.1 attempt too may have been restarting rather than
    /// old: the next attempt to it speaks MQTT 5 again.
    private mutating func revertUnconfirmedFallback() {
        guard unconfirmedFallback[server] else { return }
        unconfirmedFallback[server] = false
        protocols[server] = .v5
    }

    /// With several servers, moves to the next one and says so ("failing over to …"); nil with one. A server
    /// a broker referred the agent to comes first.
    private mutating func failOver() -> String? {
        if let referred = referredServer {
            referredServer = nil
            server = referred
            failovers += 1
            return
                "failing over to \(servers[server]), the server the broker named (MQTT 5 Server Reference; failover \(failovers))"
        }
        guard servers.count > 1 else { return nil }
        server = (server + 1) % servers.count
        failovers += 1
        return "failing over to \(servers[server]) (failover \(failovers))"
    }

    private mutating func wait(_ seconds: Double) -> Action {
        let deadline = clock.now.advanced(by: .milliseconds(Int64((seconds * 1000).rounded())))
        phase = .waiting(until: deadline)
        return .wait(until: deadline)
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.1f", value) }

    /// The addresses of an MQTT 5 Server Reference (a space-separated list of `host[:port]`, MQTT 5 §4.11) as
    /// `host:port`, in its order, leaving out what is no address. An address without a port means the
    /// configured one.
    package static func referredServers(_ written: String, defaultPort: Int) -> [String] {
        written.split(separator: " ").compactMap {
            MQTTEndpoint(parsing: String($0), defaultPort: defaultPort)?.description
        }
    }
}
