import AgentPorts
import Foundation
import Logging
import MotionWire
import Synchronization

/// Publishes the retained status (birth, republications, goodbye) straight to the client, not through the
/// outbox: it must be the first message after CONNACK, ahead of anything queued during an outage.
final class StatusPublisher: Sendable {
    private let composer: StatusComposer
    private let broker: BrokerClient
    private let topic: String
    private let logger: Logger
    /// Held while a status is composed and published: two publishers racing (the birth after CONNACK and the
    /// republication after a desired document that arrived right after subscribing) could otherwise compose in
    /// one order and publish in the other, leaving an older state as the retained status.
    private let publication = Mutex(())

    init(composer: StatusComposer, broker: BrokerClient, topic: String, logger: Logger) {
        self.composer = composer
        self.broker = broker
        self.topic = topic
        self.logger = logger
    }

    /// Composes the status as of now and publishes it (retained, QoS 1).
    func publish(_ state: AgentStatus.State, reason: String? = nil) {
        publication.withLock { _ in
            do {
                let bytes = try Self.encoder.encode(composer.status(state, reason: reason))
                try bytes.withUnsafeBytes { raw in
                    _ = try broker.publish(topic: topic, payload: raw, qos: 1, retain: true)
                }
            } catch {
                logger.error("publishing status failed: \(error)")
            }
        }
    }

    /// Publishes the status only while connected (after a command, a fault, a reload).
    func publishIfConnected() {
        if broker.isConnected { publish(.online) }
    }

    static var encoder: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return e
    }
}
