import AgentPorts
import MemoryBroker
import Synchronization

/// The contract harness on MemoryBroker, on a manual clock the harness moves: waits pump, and a wait that finds
/// nothing moving during a disconnect's flush lets 0.1 s of broker time pass (as the wall clock would for mosquitto).
final class MemoryContractBroker: ContractBroker {
    let kind = BrokerKind.memory
    let clock = ManualClock()
    let broker: MemoryBroker

    init(_ options: ContractOptions) {
        broker = MemoryBroker(
            name: "memory-broker",
            options: .init(
                maxQueuedMessages: options.maxQueuedMessages ?? 1000,
                persistence: options.persistence,
                users: options.users
            ),
            now: clock.now
        )
    }

    func makeClient(_ prefix: String, eventBacklogLimit: Int) throws -> ContractClient {
        let client = broker.makeClient(eventBacklogLimit: eventBacklogLimit)
        return ContractClient(
            client,
            name: uniqueName(prefix),
            proxy: nil,
            queuedMessageCount: { client.queuedMessageCount },
            publishRequest: { (topic, payload, responseTopic, correlationData) throws(BrokerError) in
                try client.publishRequest(
                    topic: topic,
                    payload: payload,
                    responseTopic: responseTopic,
                    correlationData: correlationData
                )
            }
        )
    }

    func connectOptions(
        for client: ContractClient,
        protocolVersion: MQTTProtocolVersion,
        cleanSession: Bool,
        will: BrokerWill?,
        username: String?,
        password: String?,
        maximumPacketSize: Int?
    ) -> BrokerConnectOptions {
        broker.connectOptions(
            clientID: client.name,
            protocolVersion: protocolVersion,
            cleanSession: cleanSession,
            username: username,
            password: password,
            will: will,
            maximumPacketSize: maximumPacketSize
        )
    }

    /// Pumps until `condition` holds. Between pumps the clients' event consumers (tasks) get to run; the bound is
    /// wall-clock time, as for mosquitto, so a consumer starved on a loaded host is waited for, not failed.
    func waitUntil(_ what: String, timeout: Double, _ condition: @Sendable () -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(timeout)
        while !condition() {
            if broker.pump() {
                await Task.yield()
            } else {
                guard clock.now < deadline else {
                    throw ContractTimeout(
                        description: "memory: waited \(timeout) s for \(what); nothing moves any more"
                    )
                }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    func passTime(seconds: Double) async {
        clock.advance(by: seconds)
        broker.network.settle()
    }

    func disconnect(_ client: ContractClient) async {
        let done = Flag()
        let waiting = Task {
            await client.client.disconnect(flushTimeout: 2)
            done.value.store(true, ordering: .releasing)
        }
        // The flush needs pumps; when nothing moves, time passes (so a flush that cannot finish meets its deadline).
        while !done.value.load(ordering: .acquiring) {
            if !broker.pump() {
                clock.advance(by: 0.1)
                try? await Task.sleep(for: .milliseconds(1))
            } else {
                await Task.yield()
            }
        }
        await waiting.value
    }

    private final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    func stop() async {
        broker.stop()
    }

    func kill() async {
        broker.kill()
    }

    func saveStore() async throws {}

    func start() async throws {
        broker.start()
    }

    func restart(keepingStore: Bool) async throws {
        broker.restart(keepingStore: keepingStore)
    }

    func cut(_ client: ContractClient) {
        broker.dropConnection(clientID: client.name)
    }

    func stall(_ client: ContractClient, towardsBroker: Bool, towardsClient: Bool) {
        broker.setStalled(clientID: client.name, towardsBroker: towardsBroker, towardsClient: towardsClient)
    }

    func waitUntilBrokerEnded(_ clientID: String, times: Int) async throws {
        try await waitUntil("the broker no longer holds \(clientID)'s connection") {
            !self.broker.connectedClientIDs.contains(clientID)
        }
    }

    func close() async {}
}

/// Seconds that move only when told.
final class ManualClock: Sendable {
    private let seconds = Mutex<Double>(1000)

    var now: @Sendable () -> Double {
        { [self] in seconds.withLock { $0 } }
    }

    func advance(by delta: Double) {
        seconds.withLock { $0 += delta }
    }
}
