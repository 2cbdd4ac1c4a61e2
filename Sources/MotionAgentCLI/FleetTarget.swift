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
