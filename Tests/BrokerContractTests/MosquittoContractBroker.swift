import AgentPorts
import Foundation
import MosquittoTransport
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The contract harness on a real mosquitto started for the case on a free loopback port.
final class MosquittoContractBroker: ContractBroker {
    let kind = BrokerKind.mosquitto
    let broker: MosquittoBroker

    init(_ options: ContractOptions) async throws {
        var extra: [String] = []
        if let limit = options.maxQueuedMessages { extra.append("max_queued_messages \(limit)") }
        broker = try await MosquittoBroker.started(
            options: .init(
                allowAnonymous: options.users == nil,
                users: options.users ?? [:],
                persistence: options.persistence,
                extraConfiguration: extra
            )
        )
    }

    func makeClient(_ prefix: String, eventBacklogLimit: Int) throws -> ContractClient {
        let client = MosquittoClient(eventBacklogLimit: eventBacklogLimit)
        return ContractClient(
            client,
            name: uniqueName(prefix),
            proxy: try LoopbackProxy(targetPort: broker.port),
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
        BrokerConnectOptions(
            host: broker.host,
            port: client.proxy?.port ?? broker.port,
            clientID: client.name,
            protocolVersion: protocolVersion,
            cleanSession: cleanSession,
            username: username,
            password: password,
            will: will,
            maximumPacketSize: maximumPacketSize
        )
    }

    func waitUntil(_ what: String, timeout: Double, _ condition: @Sendable () -> Bool) async throws {
        guard await Polling.until(timeout: timeout, interval: .milliseconds(2), condition) else {
            throw ContractTimeout(description: "mosquitto: waited \(timeout) s for \(what)")
        }
    }

    func passTime(seconds: Double) async {
        try? await Task.sleep(for: .seconds(seconds))
    }

    func disconnect(_ client: ContractClient) async {
        await client.client.disconnect(flushTimeout: 2)
    }

    func stop() async {
        await broker.stop()
    }

    func kill() async {
        await broker.kill()
    }

    func saveStore() async throws {
        let path = broker.directory + "/mosquitto.db"
        @Sendable func modified() -> Date? {
            (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        }
        let before = modified()
        guard let pid = broker.processIdentifier else { throw ContractTimeout(description: "mosquitto is not running") }
        // mosquitto(8): "Upon receiving the SIGUSR1 signal, mosquitto will write the persistence database to disk."
        _ = Glibc.kill(pid, SIGUSR1)
        try await waitUntil("mosquitto's store written") { modified() != nil && modified() != before }
    }

    func start() async throws {
        try await broker.start()
    }

    func restart(keepingStore: Bool) async throws {
        precondition(
            !keepingStore || broker.options.persistence,
            "mosquitto keeps its store across a restart only with persistence"
        )
        await broker.stop()
        if !keepingStore { try? FileManager.default.removeItem(atPath: broker.directory + "/mosquitto.db") }
        try await broker.start()
    }

    func cut(_ client: ContractClient) {
        client.proxy?.cut()
    }

    func stall(_ client: ContractClient, towardsBroker: Bool, towardsClient: Bool) {
        client.proxy?.stall(towardsBroker: towardsBroker, towardsClient: towardsClient)
    }

    func waitUntilBrokerEnded(_ clientID: String, times: Int) async throws {
        // connection_messages: "Client X disconnected." after DISCONNECT, "Client X closed its connection." on EOF.
        try await waitUntil("mosquitto's log: connection \(times) of \(clientID) ended") {
            self.broker.log.split(separator: "\n").filter {
                $0.contains("Client \(clientID) disconnected")
                    || $0.contains("Client \(clientID) closed its connection")
            }.count >= times
        }
    }

    func close() async {
        await broker.stop()
    }
}
