import AgentConfig
import AgentPorts
import ArgumentParser
import Foundation

/// `motion-agent fleet`: the desired state operators publish (docs/fleet.md) and what the devices report of it.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Read and change the fleet's desired state; see which devices run it (docs/fleet.md).",
        subcommands: [
            FleetStatusCommand.self, FleetGetCommand.self, FleetSetCommand.self, FleetUnsetCommand.self,
            FleetClearCommand.self,
        ]
    )
}
