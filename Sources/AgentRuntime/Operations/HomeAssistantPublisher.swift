import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import Foundation
import Integrations
import Logging
import MotionWire

/// Publishes the Home Assistant discovery configs after each connection, or removes them when the feature has
/// been switched off. Which config topics are out there is remembered in the state directory
/// (`home-assistant-discovery`, one topic per line): a run with the feature off still knows what to remove, and
/// a changed discovery prefix removes the configs under the old one.
package struct HomeAssistantPublisher: Sendable {
    private let enabled: Bool
    private let discovery: HomeAssistantDiscovery
    private let broker: BrokerClient
    private let state: any StateDirectory
    private let logger: Logger

    package init(
        configuration: AgentConfiguration,
        topics: TopicScheme,
        broker: BrokerClient,
        state: any StateDirectory,
        logger: Logger
    ) {
        enabled = configuration.homeAssistant.enabled
        discovery = HomeAssistantDiscovery(
            prefix: configuration.homeAssistant.discoveryPrefix,
            deviceID: configuration.device.id,
            topics: topics
        )
        self.broker = broker
        self.state = state
        self.logger = logger
    }

    /// Called after every CONNACK (retained configs survive on the broker, but a broker without persistence
    /// forgets them on restart).
    package func connected() {
        let published = Set(readMarker())
        if !enabled && published.isEmpty { return }
        let messages = enabled ? discovery.messages : []
        let current = Set(messages.map(\.topic))
        do {
            for message in messages {
                let payload = try HomeAssistantDiscovery.payload(message.entity)
                try payload.withUnsafeBytes { raw in
                    _ = try broker.publish(topic: message.topic, payload: raw, qos: 1, retain: true)
                }
            }
            // An empty retained payload deletes the retained config, and Home Assistant removes the entity.
            for topic in published.subtracting(current).sorted() {
                _ = try broker.publish(
                    topic: topic,
                    payload: UnsafeRawBufferPointer(start: nil, count: 0),
                    qos: 1,
                    retain: true
                )
            }
        } catch {
            logger.error(
                "publishing the Home Assistant discovery configs failed: \(error) — they are sent again at the next connection"
            )
            return
        }
        if enabled {
            if published != current {
                logger.info("Home Assistant discovery: \(messages.count) entities under \(discovery.prefix)/")
            }
        } else {
            logger.notice("Home Assistant discovery switched off: removed \(published.count) entity configs")
        }
        writeMarker(current.sorted())
    }

    private func readMarker() -> [String] {
        guard let bytes = try? state.read(.homeAssistantDiscovery) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    private func writeMarker(_ topics: [String]) {
        do {
            if topics.isEmpty {
                try state.remove(.homeAssistantDiscovery)
            } else {
                try state.replace(.homeAssistantDiscovery, with: Array((topics.joined(separator: "\n") + "\n").utf8))
            }
        } catch {
            logger.error(
                "\(error) — if home_assistant.enabled is switched off later, the entities will not be removed"
            )
        }
    }
}
