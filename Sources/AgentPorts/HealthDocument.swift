/// What `<state_dir>/health.json` says: the connection's state for local tools and people on the device —
/// the one place that says, without the broker, that the broker refuses this device's credentials or client id.
public struct HealthDocument: Sendable, Codable, Equatable {
    public enum State: String, Sendable, Codable {
        /// CONNACK accepted.
        case connected
        /// Trying (first attempt, or again after a failure or a lost connection).
        case connecting
        /// The broker refused the credentials or the client id; retrying slowly.
        case refused
        /// The agent shut down.
        case stopped
    }

    public var state: State
    public var broker: String
    /// The last failure, as a sentence; nil once connected.
    public var lastError: String?
    /// Failed attempts since the last successful connection.
    public var consecutiveFailures: Int
    /// When the next attempt is due, seconds since 1970; nil when none is planned.
    public var nextRetryTime: Double?
    /// When this document was written, seconds since 1970.
    public var time: Double
    /// While the durable outbox cannot keep everything (its file system is full, a write fails): what is full,
    /// what the agent does meanwhile, the fix. Absent when all is well.
    public var storageProblem: String?

    public init(
        state: State,
        broker: String,
        lastError: String?,
        consecutiveFailures: Int,
        nextRetryTime: Double?,
        time: Double,
        storageProblem: String? = nil
    ) {
        self.state = state
        self.broker = broker
        self.lastError = lastError
        self.consecutiveFailures = consecutiveFailures
        self.nextRetryTime = nextRetryTime
        self.time = time
        self.storageProblem = storageProblem
    }
}
