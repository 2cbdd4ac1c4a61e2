import AgentConfig
import AgentPorts
import ArgumentParser
import Foundation

/// `--config FILE`, shared by the commands that read the configuration.
struct ConfigurationOptions: ParsableArguments {
    @Option(name: .long, help: "The configuration file (default: ./config.yaml, then /etc/motion-agent/config.yaml).")
    var config: String?

    /// Loads and validates the configuration, or exits with EX_CONFIG (78) after printing every problem.
    func load() throws -> (AgentConfiguration, path: String) {
        guard let loaded = try loadIfPresent() else {
            printError(
                "no configuration file: pass --config FILE, or put config.yaml in the current directory or in /etc/motion-agent/"
            )
            throw ExitCode(78)
        }
        return loaded
    }

    /// As `load()`, but `nil` when no --config was given and no file is at the default paths (commands that
    /// also work without one, such as list-sensors).
    func loadIfPresent(
        refusing consequence: String = "the agent does not start"
    ) throws -> (AgentConfiguration, path: String)? {
        guard let path = config ?? ConfigurationLoader.defaultConfigPath() else { return nil }
        do {
            return (try ConfigurationLoader.load(file: path), path)
        } catch {
            printError("invalid configuration — \(consequence):\n\(error)")
            throw ExitCode(78)
        }
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data(("motion-agent: " + message + "\n").utf8))
}
