import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import ArgumentParser
import Foundation
import Logging
import MosquittoTransport
import MotionWire
import Platform
import ServiceLifecycle

/// `motion-agent run`: the daemon.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the agent: sample the IMU, compute, publish over MQTT until SIGTERM/SIGINT."
    )

    @OptionGroup var options: ConfigurationOptions

    func run() async throws {
        let (configuration, path) = try options.load()
        let logger = AgentLogging.bootstrap(level: configuration.agent.logLevel)
        logger.info("configuration loaded from \(path)")

        let stateDirectory: String
        let password: String?
        let sparkplugPassword: String?
        let trustedKeys: OperatorKeys?
        let source: SensorSource
        do {
            stateDirectory = try configuration.resolvedStateDirectory()
            // The password comes from mqtt.password_file (or MOTION_AGENT_MQTT_PASSWORD_FILE), or from
            // MOTION_AGENT_MQTT_PASSWORD for containers whose secrets arrive as variables — never from config.yaml.
            password =
                try configuration.mqtt.readPassword()
                ?? ProcessInfo.processInfo.environment["MOTION_AGENT_MQTT_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
            sparkplugPassword = try configuration.sparkplug.readPassword()
            trustedKeys = try configuration.control.readTrustedKeys().map { try OperatorKeys($0) }
            if let trustedKeys {
                logger.info(
                    "commands and desired documents must be signed by one of the operator keys \(trustedKeys.ids.joined(separator: ", ")) (control.trusted_keys_file)"
                )
            }
            if let warning = configuration.mqtt.cleartextPasswordWarning(hasPassword: password != nil) {
                logger.warning("\(warning)")
            }
            source = try SourceFactory.make(configuration: configuration, logger: logger)
        } catch {
            logger.critical("\(error)")
            throw ExitCode(78)
        }
        let state = StateFiles(path: stateDirectory)
        let agent = AgentBuilder(
            configuration: configuration,
            source: source,
            broker: MosquittoClient(logger: logger, eventBacklogBytes: InboundLimits.clientQueueBytes),
            // Sparkplug's own connection: its will is the NDEATH (docs/sparkplug.md).
            sparkplugBroker: configuration.sparkplug.enabled
                ? MosquittoClient(
                    logger: Logger(label: "motion-agent.sparkplug"),
                    eventBacklogBytes: InboundLimits.clientQueueBytes
                ) : nil,
            sparkplugPassword: sparkplugPassword,
            state: state,
            password: password,
            configurationPath: path,
            trustedKeys: trustedKeys,
            host: LinuxHost(state: state),
            logger: logger
        ).build()
        try await agent.serviceGroup(gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
    }
}
