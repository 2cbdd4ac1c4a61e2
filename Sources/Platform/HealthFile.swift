import AgentPorts
import Foundation

/// `<state_dir>/health.json`: the connection's state for local tools and people on the device, rewritten
/// atomically on every connection change — the one place that says, without the broker, that the broker
/// refuses this device's credentials or client id.
public struct HealthFile: Sendable {
    public typealias Document = HealthDocument

    public let path: String

    public init(stateDirectory: String) {
        path = stateDirectory + "/health.json"
    }

    /// Replaces the file (`AtomicFile`: temporary name, fsync, rename); failures are returned, not thrown, because
    /// health reporting must never stop the agent.
    @discardableResult
    public func write(_ document: Document) -> Error? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        do {
            let data = try encoder.encode(document)
            try AtomicFile.write(Array(data), to: path)
            return nil
        } catch {
            return error
        }
    }

    public func read() -> Document? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(Document.self, from: data)
    }
}
