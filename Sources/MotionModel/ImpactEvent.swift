/// The acceleration magnitude rose above the impact threshold: a knock, a drop landing, a collision.
public struct ImpactEvent: Sendable, Equatable, Codable {
    /// The first sample above the threshold, s on the sample clock.
    public var date: Double
    /// The largest acceleration magnitude of the impact, g.
    public var peakAcceleration: Double
    /// From the first to the last sample above the threshold, s.
    public var duration: Double

    @inlinable
    public init(date: Double, peakAcceleration: Double, duration: Double) {
        self.date = date
        self.peakAcceleration = peakAcceleration
        self.duration = duration
    }
}
