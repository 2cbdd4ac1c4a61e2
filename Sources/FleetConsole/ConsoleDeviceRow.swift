import FleetOperations
import MotionWire

/// One device's row in the page's fleet view. Every string in it but the numbers is the device's own text or
/// derived from it: the page shows it with `textContent` only, never as HTML.
package struct ConsoleDeviceRow: Encodable, Sendable, Equatable {
    package struct Metrics: Encodable, Sendable, Equatable {
        package var time: Double
        package var cpuPercent: Double
        package var rssBytes: UInt64
        package var outboxDepth: Int
        package var published: UInt64
        package var dropped: UInt64
        package var reconnects: UInt64
        package var connected: Bool

        init(_ metrics: AgentMetrics) {
            time = metrics.time
            cpuPercent = metrics.process.cpuPercent.isFinite ? metrics.process.cpuPercent : 0
            rssBytes = metrics.process.rssBytes
            outboxDepth = metrics.outbox.depth
            published = metrics.messages.published
            dropped = metrics.messages.droppedOverflow + (metrics.messages.droppedExpired ?? 0)
            reconnects = metrics.connection.reconnects
            connected = metrics.connection.connected
        }
    }

    package var device: String
    /// Whether a status came (metrics or configuration alone do not make a row the fleet knows).
    package var seen: Bool
    package var online = false
    /// When the status was made, Unix s: since when the device is online or offline.
    package var since: Double = 0
    package var agentVersion: String?
    package var bootCount: UInt64?
    package var groups: [String] = []
    /// Layer (`fleet`, `group lab`, `device`) → the version in force.
    package var desired: [String: Int] = [:]
    package var refused: String?
    package var ignored: String?
    package var impostor: String?
    package var differing: [FleetDeviceStatus.Difference] = []
    package var problem = false
    /// Messages waiting in the outbox: the latest metrics', else the status's.
    package var outboxDepth: Int?
    package var metrics: Metrics?

    package init(device: String, seen: Bool) {
        self.device = device
        self.seen = seen
    }
}

/// The device view's documents besides the row: each stream's requested and effective rate, the sensors, and
/// every setting's value and source (what `fleet status --explain` and `check-config --explain` print).
package struct ConsoleDeviceDetail: Encodable, Sendable {
    package var device: String
    package var row: ConsoleDeviceRow?
    package var streams: [String: AgentStatus.Stream]
    package var hardware: [AgentStatus.Device]?
    package var configuration: ConfigurationStatus?
}

/// A desired document as the page lists it.
package struct ConsoleDocument: Encodable, Sendable, Equatable {
    package var topic: String
    package var layer: String
    package var version: Int
    package var clear: Bool
    package var settings: [String: String]
}
