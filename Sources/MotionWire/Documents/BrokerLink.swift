/// Which broker the agent talks to, in which protocol, and how often it moved to another one: in the retained
/// status (`broker`) and the metrics (`connection.server`, `connection.failovers`).
public struct BrokerLink: Sendable, Codable, Equatable {
    /// `host:port` of the server of the current (or, while disconnected, the next) connection.
    public var server: String
    /// `v5` or `v311`: with `mqtt.protocol: auto`, what this server accepted.
    public var `protocol`: String
    /// Moves to the next server of `mqtt.servers` since the agent started.
    public var failovers: Int

    public init(server: String, protocol: String, failovers: Int) {
        self.server = server
        self.protocol = `protocol`
        self.failovers = failovers
    }
}
