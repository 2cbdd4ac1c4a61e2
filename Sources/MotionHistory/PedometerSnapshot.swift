/// The agent's pedometer counters at one moment, as `HistoryStore.recordPedometer` stores them.
///
/// Counters are CUMULATIVE since the agent's pedometer started counting in this `sessionID` (a new session
/// each agent start or pedometer reset, when the counters go back to zero). Times are wall-clock Unix
/// seconds, not the sample clock: history must line up across restarts.
package struct PedometerSnapshot: Sendable, Equatable {
    /// Identifies one run of the pedometer; counters restart at zero in a new session.
    package var sessionID: String
    /// When the counters had these values, Unix seconds.
    package var time: Double
    /// Steps since the session started.
    package var numberOfSteps: Int
    /// Metres since the session started; nil when the device cannot estimate distance.
    package var distance: Double?
    /// Floors climbed on foot since the session started; nil without a barometer.
    package var floorsAscended: Int?
    /// Floors descended on foot since the session started; nil without a barometer.
    package var floorsDescended: Int?
    /// Seconds spent walking or running since the session started, s (the basis of `averageActivePace`).
    package var activeTime: Double

    package init(
        sessionID: String,
        time: Double,
        numberOfSteps: Int,
        distance: Double? = nil,
        floorsAscended: Int? = nil,
        floorsDescended: Int? = nil,
        activeTime: Double = 0
    ) {
        self.sessionID = sessionID
        self.time = time
        self.numberOfSteps = numberOfSteps
        self.distance = distance
        self.floorsAscended = floorsAscended
        self.floorsDescended = floorsDescended
        self.activeTime = activeTime
    }
}
