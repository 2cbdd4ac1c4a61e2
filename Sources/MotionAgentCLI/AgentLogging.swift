import AgentConfig
import AgentPorts
import Logging

enum AgentLogging {
    /// Logs go to standard error (journald picks them up under systemd), at the configured level.
    static func bootstrap(level: LogLevelSetting) -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Logger.Level(rawValue: level.rawValue) ?? .info
            return handler
        }
        return Logger(label: "motion-agent")
    }
}

enum AgentVersionInfo {
    static let version = "0.1.0"
}
