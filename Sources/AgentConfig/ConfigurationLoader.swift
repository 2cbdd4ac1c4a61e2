import Foundation
import Yams

/// Reads config.yaml into an `AgentConfiguration`: defaults for what is missing, environment overrides on
/// top, and every problem reported at once with its key path and line (see `ConfigurationError`). The agent
/// refuses to start when this throws.
package enum ConfigurationLoader {
    /// Where `motion-agent run` looks when no `--config` is given, in order.
    package static let searchPaths = ["./config.yaml", "/etc/motion-agent/config.yaml"]

    /// The first of `searchPaths` that exists, or `nil` when there is none.
    package static func defaultConfigPath(
        fileExists: (String) -> Bool = FileManager.default.fileExists(atPath:)
    ) -> String? {
        searchPaths.first(where: fileExists)
    }

    /// Loads the file at `path`. Relative paths inside it (password_file, tls files, replay.file,
    /// state_dir) are taken relative to the file's directory.
    package static func load(
        file path: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> AgentConfiguration {
        let bytes: [UInt8]
        do {
            bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            let reason = FileAccess.checkReadableFile(path)?.problem ?? "cannot be read: \(error.localizedDescription)"
            throw ConfigurationError(
                kind: .fileUnavailable,
                keyPath: "",
                value: nil,
                problem: reason,
                allowed: "a readable YAML file; see the annotated config.yaml shipped with motion-agent",
                file: path
            )
        }
        guard let yaml = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationError(
                kind: .syntax,
                keyPath: "",
                value: nil,
                problem: "is not UTF-8 text",
                allowed: "a YAML file in UTF-8",
                file: path
            )
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try decode(yaml: yaml, source: path, environment: environment, relativeTo: directory)
    }

    /// Decodes YAML text. `source` names it in errors (a file name, or `<string>`); relative paths stay as
    /// written unless `baseDirectory` is given.
    package static func decode(
        yaml: String,
        source: String = "<string>",
        environment: [String: String] = [:],
        relativeTo baseDirectory: String? = nil
    ) throws(ConfigurationError) -> AgentConfiguration {
        var decoder = ConfigurationDecoder(file: source, baseDirectory: baseDirectory)
        do {
            // The schema reads every scalar's text itself, so the tags Yams' default resolver would compute
            // with a regular expression per scalar (ICU's regex engine, a few MB of resident code) go unused.
            decoder.decode(root: try Yams.compose(yaml: yaml, .basic))
        } catch {
            throw syntaxError(error, source: source)
        }
        decoder.apply(environment: environment)
        decoder.checkConsistency()
        if !decoder.errors.isEmpty {
            let ordered = decoder.errors.enumerated().sorted {
                // File order first (errors without a line, from the environment, last), then as found.
                ($0.element.line ?? .max, $0.offset) < ($1.element.line ?? .max, $1.offset)
            }
            throw ConfigurationError(collecting: ordered.map(\.element))
        }
        return decoder.configuration
    }

    private static func syntaxError(_ error: any Error, source: String) -> ConfigurationError {
        let allowed = "YAML: `key: value` lines, nested sections indented by spaces (not tabs)"
        guard let yamlError = error as? YamlError else {
            return ConfigurationError(
                kind: .syntax,
                keyPath: "",
                value: nil,
                problem: "is not valid YAML: \(error)",
                allowed: allowed,
                file: source
            )
        }
        switch yamlError {
        case .scanner(let context, let problem, let mark, _),
            .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let while_ = context.map { " (\($0.text) at line \($0.mark.line))" } ?? ""
            return ConfigurationError(
                kind: .syntax,
                keyPath: "",
                value: nil,
                problem: "is not valid YAML: \(problem)\(while_)",
                allowed: allowed,
                line: mark.line,
                file: source
            )
        case .duplicatedKeysInMapping(let duplicates, let context):
            return ConfigurationError(
                kind: .duplicateKey,
                keyPath: duplicates.joined(separator: ", "),
                value: nil,
                problem: "appears twice in one section",
                allowed: "each key once per section; delete or merge the repeated one",
                line: context.mark.line,
                file: source
            )
        case .reader(let problem, _, _, _):
            return ConfigurationError(
                kind: .syntax,
                keyPath: "",
                value: nil,
                problem: "cannot be read as YAML: \(problem)",
                allowed: allowed,
                file: source
            )
        default:
            return ConfigurationError(
                kind: .syntax,
                keyPath: "",
                value: nil,
                problem: "is not valid YAML: \(yamlError)",
                allowed: allowed,
                file: source
            )
        }
    }
}
