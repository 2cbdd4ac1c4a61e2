import AgentPorts
import Foundation
import MosquittoTransport
import Synchronization

/// An operator's connection to one broker node that reads what the node retains under some filters, then keeps
/// listening; the retained messages of a `read` are complete when its `SubscriptionBarrier` comes back.
final class RetainedSnapshot: Sendable {
    let client: MosquittoClient
    /// `host:port` of the node, as messages name it.
    let node: String
    /// The operator's own reply topic: the broker ACL lets every client write it (Deploy/mosquitto/acl).
    private let barrierTopic: String
    /// The QoS of every subscription (`--read-qos`).
    private let qos: Int
    /// What the connection has heard, shared with the task that reads its events.
    private final class Heard: Sendable {
        let messages = Mutex<[InboundMessage]>([])
        /// The tokens of the barriers that came back.
        let returned = Mutex<Set<[UInt8]>>([])
        /// nil until CONNACK or a refusal; then nil on success or the reason.
        let connection = Mutex<String??>(nil)
    }

    private let heard = Heard()
    private let pump: Task<Void, Never>

    /// Connects with `options`; returns once the node accepted (or throws after `timeout` seconds).
    init(options: BrokerConnectOptions, timeout: Double, qos: Int = 1) async throws {
        self.qos = qos
        // Room for every retained status of a large fleet arriving at once, read while they come.
        let client = MosquittoClient(eventBacklogLimit: 1 << 18)
        self.client = client
        node = "\(options.host):\(options.port)"
        // motion-ctl/<client>/probe: the shipped ACL lets operator accounts write it (Deploy/mosquitto/acl), and it
        // lies outside every reply topic (motion-ctl/<client>/reply/<device>), so a token is never read as a reply.
        let barrierTopic = "motion-ctl/\(options.clientID)/probe"
        self.barrierTopic = barrierTopic
        let heard = self.heard
        let events = client.events
        pump = Task {
            for await event in events {
                switch event {
                case .connected: heard.connection.withLock { $0 = .some(nil) }
                case .connectFailed(_, let reason, _): heard.connection.withLock { $0 = .some(reason) }
                case .disconnected(let reason, _):
                    heard.connection.withLock { if $0 == nil { $0 = .some(reason) } }
                case .message(let message):
                    if message.topic == barrierTopic {
                        heard.returned.withLock { _ = $0.insert(message.payload) }
                    } else {
                        heard.messages.withLock { $0.append(message) }
                    }
                case .serverReference: break
                }
            }
        }
        do {
            try client.connect(options)
            // The pump owns the client's events (one reader only), so the connection is awaited through it.
            let connectDeadline = ContinuousClock.now + .seconds(timeout)
            while true {
                if let outcome = heard.connection.withLock({ $0 }) {
                    if let reason = outcome {
                        throw SnapshotError(description: "cannot connect to \(node): \(reason)")
                    }
                    break
                }
                guard ContinuousClock.now < connectDeadline else {
                    throw SnapshotError(
                        description: "no answer from \(node) within \(timeout) s: is the broker running there?"
                    )
                }
                try await Task.sleep(for: .milliseconds(5))
            }
        } catch {
            pump.cancel()
            throw error
        }
    }

    /// Connects with `options` and subscribes to `filters`; returns once every retained message is in (or throws
    /// after `timeout` seconds).
    convenience init(options: BrokerConnectOptions, filters: [String], timeout: Double, qos: Int = 1) async throws {
        try await self.init(options: options, timeout: timeout, qos: qos)
        try await read(filters, timeout: timeout)
    }

    /// Subscribes to `filters` and waits until the node has handed over every message it retains under them.
    func read(_ filters: [String], timeout: Double) async throws {
        guard !filters.isEmpty else { return }
        let barrier = SubscriptionBarrier(topic: barrierTopic)
        // One SUBSCRIBE per few hundred filters keeps each packet small (a device list can be long).
        let chunks = stride(from: 0, to: filters.count, by: 500).map {
            Array(filters[$0..<min($0 + 500, filters.count)])
        }
        for chunk in chunks.dropLast() { try client.subscribe(chunk, qos: qos) }
        try barrier.subscribe(client, to: chunks.last ?? [], qos: qos)
        let deadline = ContinuousClock.now + .seconds(timeout)
        while !heard.returned.withLock({ $0.contains(barrier.token) }) {
            guard ContinuousClock.now < deadline else {
                throw SnapshotError(
                    description:
                        "\(node) did not answer within \(timeout) s: is it running, and may this account read \(filters.prefix(4).joined(separator: ", "))\(filters.count > 4 ? ", …" : "") and write \(barrier.topic) (Deploy/mosquitto/acl)?"
                )
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Every message so far, in arrival order.
    var messages: [InboundMessage] { heard.messages.withLock { $0 } }

    /// How many messages have arrived so far.
    var count: Int { heard.messages.withLock { $0.count } }

    /// The messages after the first `start`, in arrival order.
    func messages(from start: Int) -> [InboundMessage] {
        heard.messages.withLock { Array($0.dropFirst(start)) }
    }

    /// The last message of each topic so far.
    var latest: [String: InboundMessage] {
        var last: [String: InboundMessage] = [:]
        for message in messages { last[message.topic] = message }
        return last
    }

    /// Inbound messages the client dropped because this process fell behind (then the snapshot is incomplete).
    var dropped: Int { client.droppedInboundCount }

    func close() async {
        await client.disconnect(flushTimeout: 1)
        pump.cancel()
    }

    struct SnapshotError: Error, CustomStringConvertible {
        var description: String
    }
}
