/// What `<state_dir>/health.json` says: the connection's state for local tools and people on the device —
/// the one place that says, without the broker, that the broker refuses this device's credentials or client id.
package struct HealthDocument: Sendable, Codable, Equatable {
    package enum State: String, Sendable, Codable {
        /// CONNACK accepted.
        case connected
        /// Trying (first attempt, or again after a failure or a lost connection).
        case connecting
        /// The broker refused the credentials or the client id; retrying slowly.
        case refused
        /// The agent shut down.
        case stopped
    }

    package var state: State
    package var broker: String
    /// The last failure, as a sentence; nil once connected.
    package var lastError: String?
    /// Failed attempts since the last successful connection.
    package var consecutiveFailures: Int
    /// When the next attempt is due, seconds since 1970; nil when none is planned.
    package var nextRetryTime: Double?
    /// When this document was written, seconds since 1970.
    package var time: Double
    /// While the durable outbox cannot keep everything (its file system is full, a write fails): what is full,
    /// what the agent does meanwhile, the fix. Absent when all is well.
    package var storageProblem: String?

    package init(
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
