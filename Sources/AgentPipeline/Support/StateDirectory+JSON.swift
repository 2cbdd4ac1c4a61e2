import AgentPorts
import Foundation

/// The small JSON files the agent keeps in its state directory (the reference attitude's capture time, a fall
/// awaiting its resolution, the estimators' calibration): read and decoded, or encoded and replaced, in one place.
/// Each store keeps its own checks and messages; what a failure means differs from file to file.
extension StateDirectory {
    /// The file decoded as `T`, or nil when there is no such file.
    package func decodeJSON<T: Decodable>(_ type: T.Type, from file: StateFile) throws -> T? {
        guard let data = try read(file) else { return nil }
        return try JSONDecoder().decode(type, from: Data(data))
    }

    /// Replaces the file with `value` as JSON, keys sorted (and indented when `pretty`, for files people read).
    package func replaceJSON<T: Encodable>(_ file: StateFile, with value: T, pretty: Bool = true) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted] : [.sortedKeys]
        try replace(file, with: Array(encoder.encode(value)))
    }
}
