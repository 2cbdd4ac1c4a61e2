import AgentPorts
import Foundation
import MosquittoTransport
import Synchronization

/// An operator's connection that reads what the broker retains under some filters, then keeps listening; the
/// retained messages are complete when its `SubscriptionBarrier` comes back.
final class RetainedSnapshot: Sendable {
    let client: MosquittoClient
    let barrier: SubscriptionBarrier
    /// What the connection has heard, shared with the task that reads its events.
    private final class Heard: Sendable {
        let messages = Mutex<[InboundMessage]>([])
        let probed = Mutex(false)
        /// nil until CONNACK or a refusal; then nil on success or the reason.
        let connection = Mutex<String??>(nil)
    }

    private let heard = Heard()
    private let pump: Task<Void, Never>

    /// Connects with `options` and subscribes to `filters`; returns once every retained message is in
    /// (or throws after `timeout` seconds).
    init(options: BrokerConnectOptions, filters: [String], timeout: Double) async throws {
        let client = MosquittoClient()
        self.client = client
        // The operator's own reply topic: the broker ACL lets every client write it (Deploy/mosquitto/acl).
        let barrier = SubscriptionBarrier(topic: TopicScheme.operatorReply(clientID: options.clientID) + "/probe")
        self.barrier = barrier
        let heard = self.heard
        let events = client.events
        pump = Task {
            for await event in events {
                switch event {
                case .connected: heard.connection.withLock { $0 = .some(nil) }
                case .connectFailed(_, let reason, _): heard.connection.withLock { $0 = .some(reason) }
                case .disconnected(let reason, _):
                    heard.connection.withLock { if $0 == nil { $0 = .some(reason) } }
                case .message, .serverReference: break
                }
                guard case .message(let message) = event else { continue }
                if barrier.isReturn(of: message) {
                    heard.probed.withLock { $0 = true }
                } else if message.topic != barrier.topic {
                    heard.messages.withLock { $0.append(message) }
                }
            }
        }
        try client.connect(options)
        // The pump owns the client's events (one reader only), so the connection is awaited through it.
        let connectDeadline = ContinuousClock.now + .seconds(timeout)
        while true {
            if let outcome = heard.connection.withLock({ $0 }) {
                if let reason = outcome {
                    throw SnapshotTimeout(description: "cannot connect to \(options.host):\(options.port): \(reason)")
                }
                break
            }
            guard ContinuousClock.now < connectDeadline else {
                throw SnapshotTimeout(
                    description:
                        "no answer from \(options.host):\(options.port) within \(timeout) s: is the broker running there?"
                )
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        try barrier.subscribe(client, to: filters, qos: 1)
        let deadline = ContinuousClock.now + .seconds(timeout)
        while !heard.probed.withLock({ $0 }) {
            guard ContinuousClock.now < deadline else {
                throw SnapshotTimeout(
                    description:
                        "the broker did not answer within \(timeout) s: is it running, and may this account read \(filters)?"
                )
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Every message so far, in arrival order.
    var messages: [InboundMessage] { heard.messages.withLock { $0 } }

    /// The last message of each topic so far.
    var latest: [String: InboundMessage] {
        var last: [String: InboundMessage] = [:]
        for message in messages { last[message.topic] = message }
        return last
    }

    func close() async {
        await client.disconnect(flushTimeout: 1)
        pump.cancel()
    }

    struct SnapshotTimeout: Error, CustomStringConvertible {
        var description: String
    }
}
