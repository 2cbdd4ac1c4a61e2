import AgentConfig
import AgentPorts
import ArgumentParser
import Foundation

struct FleetSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set keys in a layer's desired document (version + 1, retained) and report who applied it.",
        discussion: """
            Keys are config.yaml's runtime keys, checked by its schema:
              motion-agent fleet set --fleet streams.accelerometer.rate_hz=100 streams.magnetometer.enabled=false
              motion-agent fleet set --group lab metrics.interval_s=30 --wait 10
            """
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var target: FleetTarget
    @OptionGroup var options: FleetEditOptions
    @Argument(help: "KEY=VALUE pairs, e.g. streams.gyroscope.rate_hz=50.") var assignments: [String]

    func run() async throws {
        var written: [String: String] = [:]
        for pair in assignments {
            guard let eq = pair.firstIndex(of: "=") else {
                throw ValidationError("'\(pair)' is not KEY=VALUE, e.g. streams.gyroscope.rate_hz=50")
            }
            written[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
        }
        try await FleetDocumentEditor(broker: broker, target: target, options: options)
            .edit(setting: written, unsetting: [])
    }
}
