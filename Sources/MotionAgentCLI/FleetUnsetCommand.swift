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
    @Option(help: "Seconds to wait for the broker.") var timeout: Double = 5
    @Option(help: "Seconds to wait for the devices to report the new version (0: do not wait).") var wait: Double = 5
    @OptionGroup var signing: FleetSigningOptions
    @Argument(help: "Keys or sections, e.g. streams.gyroscope.rate_hz or streams.gyroscope.") var keys: [String]

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
        .edit(setting: [:], unsetting: keys)
    }
}
