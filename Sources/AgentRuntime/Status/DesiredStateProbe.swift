import AgentPorts
import Logging

/// Publishes the probe that closes a desired-state snapshot (`ControlPlane.beginDesiredSnapshot`, begun before
/// the SUBSCRIBE it follows). Not retained: it only marks where the retained documents end.
struct DesiredStateProbe: Sendable {
    let broker: BrokerClient
    let topic: String
    let logger: Logger

    func publish(_ token: [UInt8]) {
        do {
            _ = try token.withUnsafeBytes { try broker.publish(topic: topic, payload: $0, qos: 1, retain: false) }
        } catch {
            logger.warning(
                "cannot publish the desired-state probe on \(topic): \(error) — a desired layer cleared while this device was away stays in force until the next connection"
            )
        }
    }
}
