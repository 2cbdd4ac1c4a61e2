import AgentConfig
import AgentPorts
import ArgumentParser
import Foundation

struct FleetClearCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract:
            "Clear a layer: publish {version + 1, clear: true} (retained); every device drops the layer's settings."
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var target: FleetTarget
    @OptionGroup var options: FleetEditOptions

    func run() async throws {
        try await FleetDocumentEditor(broker: broker, target: target, options: options)
            .edit(setting: [:], unsetting: [], clearing: true)
    }
}
