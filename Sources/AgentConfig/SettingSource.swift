import Foundation

/// Where a runtime setting's effective value came from, reported per key in the status document and by
/// `check-config --explain`, so an operator sees why a device runs what it runs.
public enum SettingSource: Sendable, Equatable, CustomStringConvertible {
    /// config.yaml (or the schema's default when config.yaml does not set the key).
    case configFile
    /// A desired document, with the version that set the value.
    case desired(ConfigurationLayer, version: Int)
    /// A control command's override, with its id and when it arrived (Unix seconds).
    case command(id: String, time: Double)

    /// `config.yaml`, `fleet v12`, `group lab v3`, `device v7`, `command 7f1c2a at 2026-11-25T17:02:11Z`.
    public var description: String {
        switch self {
        case .configFile:
            return "config.yaml"
        case .desired(let layer, let version):
            return "\(layer) v\(version)"
        case .command(let id, let time):
            let formatter = ISO8601DateFormatter()
            return "command \(id) at \(formatter.string(from: Date(timeIntervalSince1970: time)))"
        }
    }
}
