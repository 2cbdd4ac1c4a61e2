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
    @Option(help: "Seconds to wait for the broker.") var timeout: Double = 5
    @Option(help: "Seconds to wait for the devices to report the new version (0: do not wait).") var wait: Double = 5
    @OptionGroup var signing: FleetSigningOptions

    func run() async throws {
        try await FleetDocumentEditor(
            broker: broker,
            target: target,
            timeout: timeout,
            wait: wait,
            key: signing.signingKey,
            trustedKeys: signing.trustedKeys,
            replace: signing.replace,
            version: signing.version
        )
        .edit(setting: [:], unsetting: [], clearing: true)
    }
}
