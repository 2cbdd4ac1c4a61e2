import AgentConfig
import AgentPorts
import ArgumentParser

/// `motion-agent check-config FILE`: validates and prints the effective configuration.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract:
            "Validate a configuration file and print the effective configuration (defaults and environment applied)."
    )

    @Argument(help: "The configuration file to check.")
    var file: String

    func run() throws {
        let (configuration, _) = try ConfigurationOptions(config: file).load()
        print(configuration.effectiveYAML(), terminator: "")
    }
}

extension ConfigurationOptions {
    init(config: String?) {
        self.init()
        self.config = config
    }
}
