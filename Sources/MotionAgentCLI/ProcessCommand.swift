import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import ArgumentParser
import Foundation
import Logging
import MotionModel
import MotionWire
import Recording

/// `motion-agent process`: the live estimators over a recording, as fast as possible.
struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract:
            "Run the agent's estimators over a recording (record/replay CSV) and write every output message as JSON lines."
    )

    @Option(
        help: "The recording: header timestamp,acc_x,…,temperature (s, g in Core Motion's sign, rad/s, µT, kPa, °C)."
    )
    var input: String
    @Option(help: "Where to write the messages, one {\"stream\", \"message\"} object a line ('-' for standard output).")
    var output: String
    @Option(help: "The device-motion reference frame (default: the config's, else xArbitraryZVertical).")
    var referenceFrame: AttitudeReferenceFrame?
    @Option(
        help: "A config file for estimator settings (location, pedometer height, streams); default: built-in defaults."
    )
    var config: String?

    func run() throws {
        var configuration = AgentConfiguration()
        if let config {
            do {
                configuration = try ConfigurationLoader.load(file: config)
            } catch {
                printError("invalid configuration:\n\(error)")
                throw ExitCode(78)
            }
        }
        let recording: Recording
        do {
            recording = try Recording(contentsOf: input)
        } catch {
            printError("\(error)")
            throw ExitCode(65)
        }
        let handle: FileHandle
        if output == "-" {
            handle = FileHandle.standardOutput
        } else {
            guard FileManager.default.createFile(atPath: output, contents: nil) else {
                printError("cannot create \(output): check the directory exists and is writable")
                throw ExitCode(73)
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        }
        let processor = OfflineProcessor(
            configuration: configuration,
            referenceFrame: referenceFrame,
            logger: Logger(label: "motion-agent.process")
        )
        let recordingSummary = recording.summary
        let summary = try processor.run(
            samples: recording.samples,
            sensors: recordingSummary.sensors,
            fastestRateHz: recordingSummary.fastestRateHz,
            output: handle
        )
        try? handle.close()
        let counts = summary.messages.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        printError(String(format: "processed %d samples in %.2f s: %@", summary.samples, summary.seconds, counts))
    }
}

extension AttitudeReferenceFrame: ExpressibleByArgument {}
