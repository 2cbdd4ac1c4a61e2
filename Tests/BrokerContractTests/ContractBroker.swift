import AgentPorts
import Foundation
import Testing

/// Which broker a contract case runs against.
enum BrokerKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A real mosquitto on a free loopback port, each client behind its own `LoopbackProxy`, through MosquittoClient.
    case mosquitto
    /// MemoryBroker on a manual clock, through MemoryBrokerClient, pumped by the harness.
    case memory

    var testDescription: String { rawValue }

    /// Runs `body` with a broker of this kind, closed afterwards (also when `body` throws).
    func run(
        _ options: ContractOptions = ContractOptions(),
        _ body: (any ContractBroker) async throws -> Void
    ) async throws {
        let broker: any ContractBroker =
            switch self {
            case .mosquitto: try await MosquittoContractBroker(options)
            case .memory: MemoryContractBroker(options)
            }
        do {
            try await body(broker)
        } catch {
            await broker.close()
            throw error
        }
        await broker.close()
    }
}

/// What a case may ask of the broker it runs on.
struct ContractOptions: Sendable {
    var persistence = false
    /// mosquitto's max_queued_messages (its default, 1000, when nil).
    var maxQueuedMessages: Int?
    /// user name → password; anonymous clients refused when set.
    var users: [String: String]?
}

struct ContractTimeout: Error, CustomStringConvertible {
    var description: String
}

/// One small harness over both brokers: make clients, wait for a condition (mosquitto: bounded wall-clock waits;
/// memory: pumping), let broker time pass, stop/start/restart the broker, cut or stall one client's network.
protocol ContractBroker: Sendable {
    var kind: BrokerKind { get }
    func makeClient(_ prefix: String, eventBacklogLimit: Int) throws -> ContractClient
    func connectOptions(
        for client: ContractClient,
        protocolVersion: MQTTProtocolVersion,
        cleanSession: Bool,
        will: BrokerWill?,
        username: String?,
        password: String?,
        maximumPacketSize: Int?
    ) -> BrokerConnectOptions
    /// Returns once `condition` holds; throws naming `what` after `timeout` seconds (mosquitto) or when nothing can
    /// change any more (memory: nothing moves and the condition still fails).
    func waitUntil(_ what: String, timeout: Double, _ condition: @Sendable () -> Bool) async throws
    /// Lets `seconds` of the broker's time pass (mosquitto: sleeps; memory: advances its clock).
    func passTime(seconds: Double) async
    /// `disconnect(flushTimeout: 2)`, returning when the client has.
    func disconnect(_ client: ContractClient) async
    func stop() async
    /// The broker process killed (SIGKILL): no will, no last save.
    func kill() async
    /// mosquitto: writes its store to disk now (SIGUSR1) and returns once the file changed; memory: nothing to do.
    func saveStore() async throws
    func start() async throws
    /// Stop and start, with the retained messages and persistent sessions or without them.
    func restart(keepingStore: Bool) async throws
    /// Cuts the client's connection as a network failure would.
    func cut(_ client: ContractClient)
    func stall(_ client: ContractClient, towardsBroker: Bool, towardsClient: Bool)
    /// Returns once the broker has ended `clientID`'s connection `times` times in all (its DISCONNECT or loss
    /// processed: a will, if any, published).
    func waitUntilBrokerEnded(_ clientID: String, times: Int) async throws
    func close() async
}

extension ContractBroker {
    func makeClient(_ prefix: String) throws -> ContractClient {
        try makeClient(prefix, eventBacklogLimit: 16_384)
    }

    func connectOptions(
        for client: ContractClient,
        protocolVersion: MQTTProtocolVersion = .v5,
        cleanSession: Bool = true,
        will: BrokerWill? = nil,
        username: String? = nil,
        password: String? = nil,
        maximumPacketSize: Int? = nil
    ) -> BrokerConnectOptions {
        connectOptions(
            for: client,
            protocolVersion: protocolVersion,
            cleanSession: cleanSession,
            will: will,
            username: username,
            password: password,
            maximumPacketSize: maximumPacketSize
        )
    }

    func waitUntil(_ what: String, _ condition: @Sendable () -> Bool) async throws {
        try await waitUntil(what, timeout: 10, condition)
    }

    /// Connects and returns `sessionPresent`; throws on `.connectFailed`.
    @discardableResult
    func connect(_ client: ContractClient, _ options: BrokerConnectOptions) async throws -> Bool {
        let before = client.connectionEvents.count
        try client.client.connect(options)
        try await waitUntil("\(client.name): connected or connectFailed") {
            client.connectionEvents.dropFirst(before).contains {
                switch $0 {
                case .connected, .connectFailed: true
                default: false
                }
            }
        }
        let outcome = client.connectionEvents.dropFirst(before).first {
            switch $0 {
            case .connected, .connectFailed: true
            default: false
            }
        }
        guard case .connected(let sessionPresent) = outcome else {
            throw ContractTimeout(
                description: "\(client.name): expected .connected, got \(String(describing: outcome))"
            )
        }
        return sessionPresent
    }

    /// Subscribes to `filters` and the client's probe filter in one SUBSCRIBE, and returns once they are in place
    /// and the retained messages they bring have arrived (a probe published after it came back).
    func subscribe(_ client: ContractClient, _ filters: [String], qos: Int = 1) async throws {
        try client.client.subscribe(filters + [client.probeFilter], qos: qos)
        try await sync(from: client, to: client)
    }

    /// Returns once `subscriber` has received what `publisher` published before this call (a QoS 1 probe from
    /// `publisher` to `subscriber`'s probe filter came back after them).
    func sync(from publisher: ContractClient, to subscriber: ContractClient) async throws {
        let topic = "\(ContractClient.probePrefix)\(subscriber.name)/\(UUID().uuidString.prefix(8))"
        try publisher.publish(topic, "probe", qos: 1)
        try await waitUntil("\(subscriber.name): the probe \(topic)") { subscriber.hasMessage(topic: topic) }
    }

    /// Returns once the broker has handled every packet `client` sent before this call, the acknowledgements of the
    /// QoS 1 messages it received among them: a QoS 1 message of its own, acknowledged (a broker reads a connection's
    /// packets in order, and the client acknowledges a message before handing it over). Needed where a case counts
    /// on the broker's window: mosquitto 2.0.11 recounts its in-flight messages only up to the one a late PUBACK
    /// acknowledges, and lets that many queued messages past the window (`db__message_delete_outgoing`).
    func settle(_ client: ContractClient) async throws {
        let topic = "settle/\(client.name)/\(UUID().uuidString.prefix(8))"
        let id = try client.publish(topic, "settle", qos: 1)
        try await waitUntil("\(client.name): the broker's acknowledgement of \(topic)") {
            client.acknowledgements.acknowledged.contains(id)
        }
    }

    /// `sync` for a path that may drop a probe (QoS 0 while a backlog drains): a new probe every half second
    /// (of broker time) until one arrives, at most 20.
    func syncRepeating(from publisher: ContractClient, to subscriber: ContractClient) async throws {
        var topics: [String] = []
        for _ in 0..<20 {
            let topic = "\(ContractClient.probePrefix)\(subscriber.name)/\(UUID().uuidString.prefix(8))"
            topics.append(topic)
            try publisher.publish(topic, "probe", qos: 1)
            let sent = topics
            do {
                try await waitUntil("\(subscriber.name): one of \(sent.count) probes", timeout: 0.5) {
                    sent.contains { subscriber.hasMessage(topic: $0) }
                }
                return
            } catch {
                await passTime(seconds: 0.5)
            }
        }
        throw ContractTimeout(description: "\(subscriber.name): none of 20 probes arrived")
    }

    /// Waits for the client's terminal event number `count` and returns it.
    @discardableResult
    func waitForTerminal(_ client: ContractClient, count: Int = 1) async throws -> BrokerEvent {
        try await waitUntil("\(client.name): terminal event \(count)") { client.terminalEvents.count >= count }
        return client.terminalEvents[count - 1]
    }
}

/// A unique client id: parallel cases share nothing, and a mosquitto log line names one connection's client.
func uniqueName(_ prefix: String) -> String {
    "\(prefix)-\(UUID().uuidString.prefix(8))"
}
