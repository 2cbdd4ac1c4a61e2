import AgentPorts
import Foundation
import Recording
import Simulation

/// The config.yaml of a benchmark run of the release `motion-agent` against the bench's broker, written into
/// the broker's temporary directory with the agent's state directory beside it.
struct BenchAgentConfiguration {
    /// Where the agent's samples come from.
    enum Input {
        /// The simulator walking at `rateHz`.
        case simulated(rateHz: Double)
        /// A recording replayed in real time, looping.
        case replay(file: String)
        /// libiio on the local context (the fake IIO tree's mount namespace).
        case iio
    }

    var device: String
    var directory: String
    var port: Int
    var logLevel = "info"
    var input: Input
    /// The streams the run uses, each with its settings as a YAML flow mapping; every other stream of the table
    /// is written switched off, so a stream added to the agent stays out of the measure until a bench asks for it.
    var streams: [StreamName: String]

    var path: String { directory + "/config.yaml" }

    var yaml: String {
        let source: [String]
        switch input {
        case .simulated(let rateHz):
            source = ["  kind: simulated", "  simulated:", "    scenario: walking", "    rate_hz: \(rateHz)"]
        case .replay(let file):
            source = ["  kind: replay", "  replay:", "    file: \(file)", "    speed: realtime", "    loop: true"]
        case .iio:
            source = ["  kind: iio", "  iio:", "    uri: \"local:\""]
        }
        let lines =
            ["device:", "  id: \(device)", "agent:", "  state_dir: \(directory)/state", "  log_level: \(logLevel)"]
            + ["source:"] + source
            + ["mqtt:", "  host: 127.0.0.1", "  port: \(port)", "control:", "  persist: false", "streams:"]
            + Self.streamLines(streams)
        return lines.joined(separator: "\n") + "\n"
    }

    /// `streams:`'s lines: every stream of the table, in its order, with `settings` or switched off.
    static func streamLines(_ settings: [StreamName: String]) -> [String] {
        StreamDescriptor.table.map { "  \($0.name.rawValue): \(settings[$0.name] ?? "{enabled: false}")" }
    }

    /// Writes config.yaml and creates the state directory; returns the config's path.
    func write() throws -> String {
        try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: true)
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The input an `--input` value names, at `rateHz`: `replay` first writes a 10 s simulated 9-axis walk
    /// recorded at that rate into `directory`.
    static func input(_ name: String, rateHz: Double, directory: String) throws -> Input {
        guard name == "replay" else { return .simulated(rateHz: rateHz) }
        let file = directory + "/walk-\(Int(rateHz))hz.csv"
        try writeRecording(to: file, rateHz: rateHz, seconds: 10)
        return .replay(file: file)
    }

    /// A simulated walk with all four sensors, in the agent's record/replay CSV format.
    static func writeRecording(to path: String, rateHz: Double, seconds: Double) throws {
        var text = RecordingFormat.header + "\n"
        let recording = SimulatedRecording(
            imu: SimulatedIMU(scenario: .walking, seed: 9, nominalRateHz: rateHz),
            rateHz: rateHz,
            duration: seconds
        )
        for (sample, _) in recording { text += RecordingFormat.format(sample) + "\n" }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
