import AgentPorts
import MemoryBroker
import Synchronization

/// The agent's broker client with a tap on its connection attempts, for scenario tests about where the agent
/// connects: it records every CONNECT's options (host, port, client id, user name and password) in order, and
/// answers the attempts to a *referring endpoint* as an MQTT 5 broker that refuses with a Server Reference does —
/// `.serverReference(reference)` and then `.connectFailed` with reason code 0x9C "use another server" or 0x9D
/// "server moved" — without anything reaching the network there. Everything else goes to the in-memory client
/// it wraps, and the wrapped client's events come out of `events` in their order.
///
/// No installable broker sends a Server Reference; on real parts the end-to-end tests used a small TCP fake that
/// answered every CONNECT so (RedirectingBroker). A referring endpoint on MQTT 3.1.1 gets the same answer: such a
/// broker would refuse with return code 3 "server unavailable", which the agent treats as any refusal.
///
/// Start a device with it through `SimulationWorld.start(_:tap:)`.
package final class SimulatedConnectTap: SimulatedBrokerClient, @unchecked Sendable {
    /// What a referring endpoint answers.
    package struct Referral: Sendable, Hashable {
        /// The Server Reference as the broker writes it ("host:port", or a list).
        package var reference: String
        /// 0x9C (use another server) or 0x9D (server moved).
        package var reasonCode: Int

        package init(reference: String, reasonCode: Int = 0x9C) {
            self.reference = reference
            self.reasonCode = reasonCode
        }
    }

    private struct State {
        var attempts: [BrokerConnectOptions] = []
        var referred = 0
        var continuation: AsyncStream<BrokerEvent>.Continuation?
    }

    /// The state, shared with the task that forwards the wrapped client's events.
    private final class Shared: Sendable {
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
    }

    /// The client that really talks to the in-memory network.
    package let inner: MemoryBrokerClient
    package let events: AsyncStream<BrokerEvent>
    /// "host:port" → what that endpoint answers.
    package let referrals: [String: Referral]
    private let shared: Shared

    /// Wraps `inner`; `executor` runs the task that forwards its events (the world's executor, so that the
    /// order stays the simulation's).
    package init(
        wrapping inner: MemoryBrokerClient,
        referrals: [String: Referral],
        executor: SimulationExecutor
    ) {
        self.inner = inner
        self.referrals = referrals
        let (stream, continuation) = AsyncStream<BrokerEvent>.makeStream()
        events = stream
        let shared = Shared(State(continuation: continuation))
        self.shared = shared
        Task(executorPreference: executor) { [inner, shared] in
            for await event in inner.events {
                _ = shared.state.withLock { $0.continuation?.yield(event) }
            }
            shared.state.withLock { state in
                state.continuation?.finish()
                state.continuation = nil
            }
        }
    }

    /// Every connection attempt the agent made, oldest first (referred ones included).
    package var attempts: [BrokerConnectOptions] { shared.state.withLock { $0.attempts } }

    /// How many attempts a referring endpoint answered with its reference.
    package var referred: Int { shared.state.withLock { $0.referred } }

    package var droppedInboundCount: Int { inner.droppedInboundCount }

    package var inboundDrops: InboundDrops { inner.inboundDrops }

    package var isConnected: Bool { inner.isConnected }

    package func setAcknowledgementHandler(_ handler: (any BrokerAcknowledgementHandler)?) {
        inner.setAcknowledgementHandler(handler)
    }

    package func connect(_ options: BrokerConnectOptions) throws(BrokerError) {
        let endpoint = "\(options.host):\(options.port)"
        let referral = referrals[endpoint]
        shared.state.withLock { $0.attempts.append(options) }
        guard let referral else {
            try inner.connect(options)
            return
        }
        let text = referral.reasonCode == 0x9D ? "server moved" : "use another server"
        let code = "0x\(String(referral.reasonCode, radix: 16, uppercase: true))"
        shared.state.withLock { state in
            state.referred += 1
            state.continuation?.yield(.serverReference(referral.reference))
            state.continuation?.yield(
                .connectFailed(
                    code: referral.reasonCode,
                    reason:
                        "connect to \(endpoint) refused by the broker: \(text) (reason code \(code)) — the agent goes to a server the broker names (MQTT 5 Server Reference) only when mqtt.servers lists it",
                    isAuthorization: false
                )
            )
        }
    }

    package func disconnect(flushTimeout: Double) async { await inner.disconnect(flushTimeout: flushTimeout) }

    package func publish(
        topic: String,
        payload: UnsafeRawBufferPointer,
        qos: Int,
        retain: Bool,
        expirySeconds: UInt32
    ) throws(BrokerError) -> Int32 {
        try inner.publish(topic: topic, payload: payload, qos: qos, retain: retain, expirySeconds: expirySeconds)
    }

    package func publishResponse(topic: String, payload: [UInt8], correlationData: [UInt8]?) throws(BrokerError) {
        try inner.publishResponse(topic: topic, payload: payload, correlationData: correlationData)
    }

    package func subscribe(_ filters: [String], qos: Int) throws(BrokerError) {
        try inner.subscribe(filters, qos: qos)
    }

    /// The process died: the wrapped connection is cut (the broker publishes the will) and `events` ends.
    package func kill() {
        inner.kill()
        shared.state.withLock { state in
            state.continuation?.finish()
            state.continuation = nil
        }
    }
}

extension SimulationWorld {
    /// Starts a process of `device` (as `start(_:)`) on a client `tap` makes from the in-memory client the world
    /// would have given it — a `SimulatedConnectTap` to see and redirect its connection attempts. Returns what
    /// `tap` made.
    @discardableResult
    package func start<Client: SimulatedBrokerClient>(
        _ device: SimulatedAgent,
        tap: (MemoryBrokerClient) -> Client
    ) -> Client {
        let client = tap(makeClient())
        executor.run { device.start(clock: clock, executor: executor, client: client) }
        return client
    }
}
