import AgentPorts
import Logging
import MotionWire
import Synchronization

/// Publishes the retained status (birth, republications, goodbye) straight to the client, not through the
/// outbox: it must be the first message after CONNACK, ahead of anything queued during an outage. Beside it,
/// the full account of the configuration on `{root}/configuration` (retained), only when that changed or the
/// connection is new: a fleet of subscribers to `motion/+/status` then receives a compact document per
/// convergence, and no one pays for every setting's source but who asks for it.
final class StatusPublisher: Sendable {
    private let composer: StatusComposer
    private let broker: BrokerClient
    private let topic: String
    private let configurationTopic: String
    private let logger: Logger
    /// Held while a status is composed and published: two publishers racing (the birth after CONNACK and the
    /// republication after a desired document that arrived right after subscribing) could otherwise compose in
    /// one order and publish in the other, leaving an older state as the retained status. It also guards the
    /// configuration document last published on this connection (nil: publish it with the next status), kept as
    /// a value: comparing it is far cheaper than encoding every setting's account with every status.
    private let publication = Mutex<ConfigurationStatus?>(nil)

    init(composer: StatusComposer, broker: BrokerClient, topics: TopicScheme, logger: Logger) {
        self.composer = composer
        self.broker = broker
        self.topic = topics.status
        self.configurationTopic = topics.configuration
        self.logger = logger
    }

    /// Composes the status as of now and publishes it (retained, QoS 1); `birth` marks the first one of a
    /// connection, which also republishes the configuration document (the node may be another, whose retained
    /// store lacks it).
    func publish(_ state: AgentStatus.State, reason: String? = nil, birth: Bool = false) {
        publication.withLock { lastConfiguration in
            do {
                let (status, configuration) = composer.compose(state, reason: reason)
                let bytes = try StatusJSON.encode(status)
                try bytes.withUnsafeBytes { raw in
                    _ = try broker.publish(topic: topic, payload: raw, qos: 1, retain: true)
                }
                // Not with the goodbye: it says nothing new about the configuration.
                guard state == .online else { return }
                // Its `time` is the status's: compared without it, or every status would carry the whole account
                // again (as it did), whatever changed.
                var unstamped = configuration
                unstamped.time = lastConfiguration?.time
                guard birth || unstamped != lastConfiguration else { return }
                let account = try StatusJSON.encode(configuration)
                try account.withUnsafeBytes { raw in
                    _ = try broker.publish(topic: configurationTopic, payload: raw, qos: 1, retain: true)
                }
                lastConfiguration = configuration
            } catch {
                logger.error("publishing status failed: \(error)")
            }
        }
    }

    /// Publishes the status only while connected (after a command, a fault, a reload).
    func publishIfConnected() {
        if broker.isConnected { publish(.online) }
    }
}
