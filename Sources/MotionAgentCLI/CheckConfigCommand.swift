import AgentConfig
import AgentPorts
import ArgumentParser
import Foundation
import Platform

/// `motion-agent check-config FILE`: validates and prints the effective configuration.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract:
            "Validate a configuration file and print the effective configuration (defaults and environment applied).",
        discussion: """
            With --explain, prints instead every setting that can change at runtime with the value the agent \
            would run and where it comes from: config.yaml, a fleet, group or device desired document kept in \
            the state directory, or a command override (docs/fleet.md).
            """
    )

    @Argument(help: "The configuration file to check.")
    var file: String

    @Flag(help: "Show each runtime setting's effective value and its source (config.yaml, desired layers, commands).")
    var explain = false

    func run() throws {
        let (configuration, _) = try ConfigurationOptions(config: file).load()
        let environmentPassword = ProcessInfo.processInfo.environment["MOTION_AGENT_MQTT_PASSWORD"] ?? ""
        if let warning = configuration.mqtt.cleartextPasswordWarning(
            hasPassword: configuration.mqtt.passwordFile != nil || !environmentPassword.isEmpty
        ) {
            // stderr: stdout is the effective configuration, which scripts read.
            FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
        }
        guard explain else {
            print(configuration.effectiveYAML(), terminator: "")
            return
        }
        let stateDirectory = try configuration.resolvedStateDirectory()
        let store = DesiredStateStore(state: StateFiles(path: stateDirectory))
        var layers = ConfigurationLayers(base: configuration)
        let kept = store.load(layers: layers.order)
        layers = ConfigurationLayers(base: configuration, documents: kept.documents, overrides: kept.overrides)
        let resolution = layers.resolve()
        let keyWidth = resolution.entries.map(\.keyPath.count).max() ?? 0
        let valueWidth = max(5, resolution.entries.map(\.value.count).max() ?? 0)
        print("key".padded(to: keyWidth) + "  " + "value".padded(to: valueWidth) + "  source")
        for entry in resolution.entries {
            print(entry.keyPath.padded(to: keyWidth) + "  " + entry.value.padded(to: valueWidth) + "  \(entry.source)")
        }
        let applied = layers.order.compactMap { layer in layers.documents[layer].map { "\(layer) v\($0.version)" } }
        print("")
        print("state directory: \(stateDirectory)")
        print("desired documents kept: " + (applied.isEmpty ? "none" : applied.joined(separator: ", ")))
        print("command overrides kept: \(layers.overrides.count)")
        // What a change of each kind of key does (SettingEffect.of): said, so nobody reads a value as in
        // force before it is.
        let opensLog = SettingEffect.runtimeKeys.filter { $0.effect == .opensDurableLog }.map(\.keyPath)
        print(
            "effects: a change of a key above \(SettingEffect.immediate.rawValue); of streams.<stream>.durable "
                + "(\(opensLog.count) keys) \(SettingEffect.opensDurableLog.rawValue) first; "
                + "of any other key of config.yaml \(SettingEffect.restart.rawValue)"
        )
        for problem in kept.problems { print("problem: \(problem)") }
        if FileManager.default.fileExists(atPath: stateDirectory + "/streams.json") {
            print(
                "note: \(stateDirectory)/streams.json (round one's saved stream settings) becomes command overrides "
                    + "of the keys that differ from config.yaml at the agent's next start"
            )
        }
    }
}

extension ConfigurationOptions {
    init(config: String?) {
        self.init()
        self.config = config
    }
}

extension String {
    fileprivate func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
