import AgentConfig
import ArgumentParser
import Foundation

/// `--config FILE`, shared by the commands that read the configuration.
struct ConfigurationOptions: ParsableArguments {
    @Option(name: .long, help: "The configuration file (default: ./config.yaml, then /etc/motion-agent/config.yaml).")
    var config: String?

    /// Loads and validates the configuration, or exits with EX_CONFIG (78) after printing every problem.
    func load() throws -> (AgentConfiguration, path: String) {
        guard let path = config ?? ConfigurationLoader.defaultConfigPath() else {
            printError(
                "no configuration file: pass --config FILE, or put config.yaml in the current directory or in /etc/motion-agent/"
            )
            throw ExitCode(78)
        }
        do {
            return (try ConfigurationLoader.load(file: path), path)
        } catch {
            printError("invalid configuration — the agent does not start:\n\(error)")
            throw ExitCode(78)
        }
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data(("motion-agent: " + message + "\n").utf8))
}
