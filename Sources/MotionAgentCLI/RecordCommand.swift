import AgentConfig
import AgentPorts
import ArgumentParser
import Foundation
import Logging
import MotionModel
import ServiceLifecycle

/// `motion-agent record`: the configured source's calibrated samples, every sensor on, into a record/replay
/// CSV for a fixed time, for `source.kind: replay` and `motion-agent process` to play back.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract:
            "Record the configured sensor source's calibrated samples (every sensor on) into a record/replay CSV.",
        discussion: """
            Columns: timestamp,acc_x,acc_y,acc_z,gyro_x,gyro_y,gyro_z,mag_x,mag_y,mag_z,pressure,temperature \
            (s, g in Core Motion's sign convention, rad/s, µT, kPa, °C); one row per sample a device delivers, \
            a cell empty where that sensor gave no sample. Play it back with source.kind: replay.
            """
    )

    /// Above this the default rate does not go (`SupportedRates.highest(atMost:)` says why).
    static let defaultRateLimitHz = 200.0

    @Option(help: "How long to record, in seconds.")
    var duration: Double
    @Option(help: "The CSV file to write (replaced if it exists).")
    var output: String
    @Option(
        help:
            "The configuration file for source.* (default: ./config.yaml, then /etc/motion-agent/config.yaml, else built-in defaults)."
    )
    var config: String?
    @Option(
        help:
            "The sampling rate to ask every device for, Hz; each runs at the lowest rate it supports at or above it, clamped to its maximum. Default: the highest rate ≤ 200 Hz each supports."
    )
    var rate: Double?

    func validate() throws {
        guard duration.isFinite, duration > 0 else {
            throw ValidationError("--duration must be a positive number of seconds, not \(duration)")
        }
        if let rate, !(rate.isFinite && rate > 0) {
            throw ValidationError("--rate must be a positive number of hertz, not \(rate)")
        }
    }

    func run() async throws {
        let configuration = try loadConfiguration()
        let logger = AgentLogging.bootstrap(level: configuration.agent.logLevel)
        let source: SensorSource
        do {
            source = try SourceFactory.make(configuration: configuration, logger: logger)
        } catch {
            printError("\(error)")
            throw ExitCode(78)
        }
        var plan = AcquisitionPlan()
        for device in source.devices {
            let rateHz =
                rate.map { device.supportedRates.lowest(atLeast: $0) }
                ?? device.supportedRates.highest(atMost: Self.defaultRateLimitHz)
            plan.devices[device.id] = DevicePlan(rateHz: rateHz, sensors: device.sensors)
        }
        try source.apply(plan)

        guard FileManager.default.createFile(atPath: output, contents: nil) else {
            printError("cannot create \(output): check the directory exists and is writable")
            throw ExitCode(73)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        defer { try? handle.close() }
        let session = RecordingSession(source: source, duration: duration, output: handle, logger: logger)
        // SIGINT (Ctrl-C) and SIGTERM end the recording early; the rows held so far are still written.
        // The session returning (its time is up, or the replay ended) is the normal end, not a failure.
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: session, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        do {
            try await group.run()
        } catch {
            printError("recording stopped: \(error)")
            throw ExitCode(74)
        }
        guard let outcome = session.outcome else {
            printError("recording stopped before it wrote its last rows")
            throw ExitCode(74)
        }
        let rates = plan.devices.keys.sorted().map { "\($0) at \(Self.hz(plan.devices[$0]!.rateHz)) Hz" }
        var summary = String(format: "recorded %.1f s to %@: ", outcome.seconds, output) + outcome.summary
        summary += " (" + rates.joined(separator: ", ") + ")"
        if outcome.interrupted { summary += "; stopped early by a signal" }
        if outcome.faults > 0 { summary += "; \(outcome.faults) device fault(s), see the log" }
        printError(summary)
    }

    /// `--config`, else the default paths, else the built-in defaults (source.kind auto: IIO when found).
    private func loadConfiguration() throws -> AgentConfiguration {
        guard let path = config ?? ConfigurationLoader.defaultConfigPath() else { return AgentConfiguration() }
        do {
            return try ConfigurationLoader.load(file: path)
        } catch {
            printError("invalid configuration:\n\(error)")
            throw ExitCode(78)
        }
    }

    private static func hz(_ v: Double) -> String {
        Int(exactly: v).map(String.init) ?? String(v)
    }
}
