import AgentPorts
import Foundation

/// `<state_dir>/health.json`: the connection's state for local tools and people on the device, rewritten
/// atomically on every connection change — the one place that says, without the broker, that the broker
/// refuses this device's credentials or client id.
package struct HealthFile: Sendable {
    package typealias Document = HealthDocument

    let state: any StateDirectory

    package init(state: any StateDirectory) {
        self.state = state
    }

    package var path: String { state.location(of: .health) }

    /// Replaces the file; failures are returned, not thrown, because health reporting must never stop the agent.
    @discardableResult
    package func write(_ document: Document) -> Error? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        do {
            try state.replace(.health, with: Array(encoder.encode(document)))
            return nil
        } catch {
            return error
        }
    }

    package func read() -> Document? {
        guard let data = (try? state.read(.health)).flatMap({ $0 }) else { return nil }
        return try? JSONDecoder().decode(Document.self, from: Data(data))
    }
}
