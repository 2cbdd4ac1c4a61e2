import AgentConfig
import AgentPorts
import ArgumentParser
import Foundation
import MotionWire

struct FleetGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print a layer's retained desired document."
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var target: FleetTarget
    @Option(help: "Seconds to wait for the broker.") var timeout: Double = 5

    func run() async throws {
        let topic = target.topic(broker)
        let snapshot = try await RetainedSnapshot(
            options: try broker.connectOptions(clientID: "motion-fleet-\(UUID().uuidString.prefix(8))"),
            filters: [topic],
            timeout: timeout
        )
        defer { Task { await snapshot.close() } }
        guard let message = snapshot.latest[topic], !message.payload.isEmpty else {
            printError("no desired document is retained on \(topic)")
            throw ExitCode(1)
        }
        guard let members = retainedDocumentMembers(message.payload) else {
            printError("the payload retained on \(topic) is not a JSON object")
            throw ExitCode(1)
        }
        print(
            Printable.text(String(decoding: StrictJSON.Value.object(members).encoded(), as: UTF8.self), limit: 100_000)
        )
        await snapshot.close()
    }
}
