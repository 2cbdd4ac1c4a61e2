import AgentConfig
import AgentPorts
import ArgumentParser
import FleetOperations
import Foundation
import MotionWire

struct FleetGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print a layer's retained desired document."
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var reading: FleetReadOptions
    @OptionGroup var target: FleetTarget
    @Option(help: "Seconds to wait for the broker.") var timeout: Double = 5

    func run() async throws {
        let topic = target.topic(broker)
        let snapshot = try await FleetSnapshot.open(broker, reading: reading, timeout: timeout)
        let retained: FleetSnapshot.Retained
        do {
            try await snapshot.read([topic], timeout: timeout)
            retained = snapshot.retained(on: topic)
        } catch {
            await snapshot.close()
            throw error
        }
        await snapshot.close()
        // The newest any node retains: the highest version.
        guard let payload = retained.payload else {
            for (node, problem) in retained.unreadable.sorted(by: { $0.key < $1.key }) {
                printError("the document retained on \(topic) at \(node) is not valid: \(problem)")
            }
            printError("no desired document is retained on \(topic)")
            throw ExitCode(1)
        }
        guard let members = RetainedDesiredDocument.members(payload) else {
            printError("the payload retained on \(topic) is not a JSON object")
            throw ExitCode(1)
        }
        print(
            Printable.text(String(decoding: StrictJSON.Value.object(members).encoded(), as: UTF8.self), limit: 100_000)
        )
        if !retained.behind.isEmpty {
            printError(
                "\(retained.behind.joined(separator: ", ")) retain an older version (or none): devices connecting there get it; publish again to every node"
            )
            throw ExitCode(1)
        }
    }
}
