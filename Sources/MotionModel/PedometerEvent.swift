/// A change between walking (or running) and not, like Core Motion's `CMPedometerEvent`.
public struct PedometerEvent: Sendable, Equatable, Codable {
    /// Core Motion's `CMPedometerEventType`.
    public enum EventType: String, Sendable, Equatable, Codable, CaseIterable {
        /// The user stopped walking or running.
        case pause
        /// The user started (or resumed) walking or running.
        case resume
    }

    /// When the change happened, s on the sample clock: the last step before a pause, the first step of a
    /// resumed walk (which the detector confirms a few steps later and back-dates).
    public var date: Double
    public var type: EventType

    @inlinable
    public init(date: Double, type: EventType) {
        self.date = date
        self.type = type
    }
}
