/// Step counting and walking figures over an interval, like Core Motion's `CMPedometerData`.
///
/// Dates are seconds on the sample clock (`IMUSample.timestamp`), not wall-clock dates: the agent maps them
/// to wall time where it publishes. Optional fields are `nil` when the device cannot produce them (no
/// barometer: no floors) or when there is nothing to report yet (no pace before the first steps), as
/// Core Motion leaves its `NSNumber?` properties nil.
public struct PedometerData: Sendable, Equatable, Codable {
    /// Start of the interval, s on the sample clock.
    public var startDate: Double
    /// End of the interval, s on the sample clock.
    public var endDate: Double
    /// Steps taken in the interval.
    public var numberOfSteps: Int
    /// Distance walked or run in the interval, m.
    public var distance: Double?
    /// Floors climbed on foot (about 3 m of height each), not counting lifts.
    public var floorsAscended: Int?
    /// Floors descended on foot.
    public var floorsDescended: Int?
    /// Seconds per metre over the last few steps, s/m; nil when not moving.
    public var currentPace: Double?
    /// Steps per second over the last few steps, steps/s; nil when not moving.
    public var currentCadence: Double?
    /// Seconds per metre averaged over the time spent walking or running in the interval, s/m.
    public var averageActivePace: Double?

    @inlinable
    public init(
        startDate: Double,
        endDate: Double,
        numberOfSteps: Int,
        distance: Double? = nil,
        floorsAscended: Int? = nil,
        floorsDescended: Int? = nil,
        currentPace: Double? = nil,
        currentCadence: Double? = nil,
        averageActivePace: Double? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.numberOfSteps = numberOfSteps
        self.distance = distance
        self.floorsAscended = floorsAscended
        self.floorsDescended = floorsDescended
        self.currentPace = currentPace
        self.currentCadence = currentCadence
        self.averageActivePace = averageActivePace
    }
}
