import AgentConfig
import AgentPorts
import ArgumentParser
import Foundation

struct FleetUnsetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unset",
        abstract: "Remove keys (or whole sections) from a layer's desired document (version + 1, retained)."
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var target: FleetTarget
    @OptionGroup var options: FleetEditOptions
    @Argument(help: "Keys or sections, e.g. streams.gyroscope.rate_hz or streams.gyroscope.") var keys: [String]

    func run() async throws {
        try await FleetDocumentEditor(broker: broker, target: target, options: options)
            .edit(setting: [:], unsetting: keys)
    }
}
