import FleetOperations
import MotionWire

/// One device's row in the page's fleet view. Every string in it but the numbers is the device's own text or
/// derived from it: the page shows it with `textContent` only, never as HTML.
public struct ConsoleDeviceRow: Encodable, Sendable, Equatable {
    public struct Metrics: Encodable, Sendable, Equatable {
        public var time: Double
        public var cpuPercent: Double
        public var rssBytes: UInt64
        public var outboxDepth: Int
        public var published: UInt64
        public var dropped: UInt64
        public var reconnects: UInt64
        public var connected: Bool

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

    public var device: String
    /// Whether a status came (metrics or configuration alone do not make a row the fleet knows).
    public var seen: Bool
    public var online = false
    /// When the status was made, Unix s: since when the device is online or offline.
    public var since: Double = 0
    public var agentVersion: String?
    public var bootCount: UInt64?
    public var groups: [String] = []
    /// Layer (`fleet`, `group lab`, `device`) → the version in force.
    public var desired: [String: Int] = [:]
    public var refused: String?
    public var ignored: String?
    public var impostor: String?
    public var differing: [FleetDeviceStatus.Difference] = []
    public var problem = false
    /// Messages waiting in the outbox: the latest metrics', else the status's.
    public var outboxDepth: Int?
    public var metrics: Metrics?

    public init(device: String, seen: Bool) {
        self.device = device
        self.seen = seen
    }
}

/// The device view's documents besides the row: each stream's requested and effective rate, the sensors, and
/// every setting's value and source (what `fleet status --explain` and `check-config --explain` print).
public struct ConsoleDeviceDetail: Encodable, Sendable {
    public var device: String
    public var row: ConsoleDeviceRow?
    public var streams: [String: AgentStatus.Stream]
    public var hardware: [AgentStatus.Device]?
    public var configuration: ConfigurationStatus?
}

/// A desired document as the page lists it.
public struct ConsoleDocument: Encodable, Sendable, Equatable {
    public var topic: String
    public var layer: String
    public var version: Int
    public var clear: Bool
    public var settings: [String: String]
}
