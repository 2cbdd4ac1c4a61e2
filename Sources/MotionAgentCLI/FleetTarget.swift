import AgentConfig
import AgentPorts
import ArgumentParser
import Foundation
import MotionWire

/// Which layer's desired document a `fleet get|set|unset` addresses.
struct FleetTarget: ParsableArguments {
    @Flag(help: "The fleet's document (control.fleet_desired_topic).") var fleet = false
    @Option(help: "A group's document (its members list it under control.groups).") var group: String?
    @Option(help: "One device's document ({root}/desired).") var device: String?
    @Option(help: "The fleet's desired topic.") var fleetTopic = TopicScheme.fleetDesired

    func validate() throws {
        guard [fleet, group != nil, device != nil].filter({ $0 }).count == 1 else {
            throw ValidationError("address exactly one of --fleet, --group NAME or --device ID")
        }
    }

    func topic(_ broker: BrokerOptions) -> String {
        if let group { return TopicScheme.groupDesired(group) }
        if let device { return broker.topics(device: device).desired }
        return fleetTopic
    }

    /// How the devices' status names this layer (`fleet`, `group lab`, `device`).
    var layer: ConfigurationLayer {
        if let group { return .group(group) }
        if device != nil { return .device }
        return .fleet
    }
}

/// The JSON of a retained desired document, unverified, for display and comparison (`fleet get`,
/// `fleet status`): a signed envelope's signed object without its `target` and `layer`, or the payload itself.
/// Never applied to anything: what devices apply they verify themselves.
func retainedDocumentMembers(_ payload: [UInt8]) -> [(key: String, value: StrictJSON.Value)]? {
    guard case .object(let outer)? = try? StrictJSON.parse(payload, limits: .desiredDocument) else { return nil }
    guard outer.count == 3, let signed = outer.first(where: { $0.key == "signed" })?.value.string,
        outer.contains(where: { $0.key == "key" }), let bytes = Base64.decode(signed),
        case .object(let inner)? = try? StrictJSON.parse(bytes, limits: .desiredDocument)
    else { return outer }
    return inner.filter { $0.key != "target" && $0.key != "layer" }
}

/// The retained desired document on `topic`, unverified (see `retainedDocumentMembers`).
func retainedDocument(_ payload: [UInt8], topic: String) -> DesiredDocument? {
    retainedDocumentMembers(payload).flatMap { try? DesiredDocument.decode(members: $0, source: topic) }
}
