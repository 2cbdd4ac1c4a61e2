import AgentPorts
import Foundation
import Logging
import Synchronization

/// The console's connections to the broker: one per node (`--server`, repeated), subscribed to the fleet's
/// retained documents, kept up by reconnecting every 2 s after a loss; one more per watched device, on the first
/// node, subscribed to that device's streams. The clients come from `makeClient` (the CLI picks the adapter:
/// MosquittoTransport's client), so this module depends on the port only.
package struct ConsoleBroker: Sendable {
    /// Each node's connection options (client ids differ per node; the device subscriptions add a suffix).
    package let options: [BrokerConnectOptions]
    package let root: String
    package let makeClient: @Sendable () -> any BrokerClient
    /// The subscription QoS of the fleet filters (`--read-qos`, as `fleet` reads).
    package let readQoS: Int
    private let clients: [any BrokerClient]
    private let logger: Logger

    package init(
        options: [BrokerConnectOptions],
        root: String,
        readQoS: Int = 1,
        logger: Logger,
        makeClient: @escaping @Sendable () -> any BrokerClient
    ) {
        self.options = options
        self.root = root
        self.readQoS = readQoS
        self.makeClient = makeClient
        self.logger = logger
        clients = options.map { _ in makeClient() }
    }

    /// `host:port` of each node.
    package var nodes: [String] { options.map { "\($0.host):\($0.port)" } }

    /// Keeps every node's fleet subscription up, feeding `hub`, until cancelled.
    func run(hub: ConsoleHub) async {
        await withTaskGroup(of: Void.self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask { await self.keep(client, node: index, hub: hub) }
            }
            await group.waitForAll()
        }
    }

    private func keep(_ client: any BrokerClient, node: Int, hub: ConsoleHub) async {
        let options = options[node]
        let filters = hub.state.withLock { $0.board.filters }
        let reconnect = Mutex(false)
        let events = Task {
            for await event in client.events {
                switch event {
                case .connected:
                    hub.connection(node: node, up: true)
                    do {
                        try client.subscribe(filters, qos: readQoS)
                    } catch {
                        logger.error("cannot subscribe at \(nodes[node]): \(error)")
                    }
                case .connectFailed(_, let reason, _), .disconnected(let reason, _):
                    hub.connection(node: node, up: false)
                    logger.warning("the broker at \(nodes[node]) is not reachable: \(reason) — retrying every 2 s")
                    reconnect.withLock { $0 = true }
                case .message(let message):
                    hub.receive(message, node: node)
                case .serverReference: break
                }
            }
        }
        do {
            try client.connect(options)
        } catch {
            logger.error("cannot connect to \(nodes[node]): \(error)")
            reconnect.withLock { $0 = true }
        }
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(2))
            guard
                reconnect.withLock({
                    let due = $0
                    $0 = false
                    return due
                })
            else { continue }
            try? client.connect(options)
        }
        events.cancel()
        await client.disconnect(flushTimeout: 1)
    }

    /// Subscribes `client` (new) to `device`'s streams on the first node, feeding the hub's watch of it, and
    /// connects again every 2 s after a loss while the hub still watches the device with this client: without it
    /// a device's page stopped moving for good after a broker outage, while the fleet view came back.
    func follow(device: String, with client: any BrokerClient, hub: ConsoleHub) {
        var options = options[0]
        options.clientID += "-w\(UInt32.random(in: 0...UInt32.max))"
        let filter = TopicScheme(template: root, device: device).everything
        let logger = logger
        let node = nodes[0]
        Task {
            for await event in client.events {
                switch event {
                case .connected:
                    try? client.subscribe([filter], qos: 0)
                case .message(let message):
                    hub.receiveLive(message, device: device)
                case .connectFailed(_, let reason, _), .disconnected(let reason, _):
                    // A watch that ended disconnected its client: nothing to come back to.
                    guard hub.follows(device, with: client) else { return }
                    logger.warning("lost \(device)'s streams at \(node): \(reason) — retrying every 2 s")
                    try? await Task.sleep(for: .seconds(2))
                    guard hub.follows(device, with: client) else { return }
                    try? client.connect(options)
                case .serverReference: break
                }
            }
        }
        do {
            try client.connect(options)
        } catch {
            logger.error("cannot follow a device's streams: \(error)")
        }
    }

    /// Publishes a desired document retained at QoS 1 on every node: where nodes keep retained messages apart
    /// (RabbitMQ) each needs its copy; where they share them the copies are one document.
    func publish(topic: String, payload: [UInt8]) throws {
        for client in clients {
            _ = try payload.withUnsafeBytes { try client.publish(topic: topic, payload: $0, qos: 1, retain: true) }
        }
    }
}
