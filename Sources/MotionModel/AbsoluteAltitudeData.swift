/// Altitude above sea level, like Core Motion's `CMAbsoluteAltitudeData`.
public struct AbsoluteAltitudeData: Sendable, Equatable, Codable {
    /// s on the sample clock.
    public var timestamp: Double
    /// Metres above mean sea level (ICAO standard atmosphere and the configured sea-level pressure).
    public var altitude: Double
    /// One standard deviation of the altitude's error, m: mostly how far the day's sea-level pressure may be
    /// from the configured one.
    public var accuracy: Double
    /// One standard deviation of the sample-to-sample scatter, m: the barometer's noise seen as height.
    public var precision: Double

    @inlinable
    public init(timestamp: Double, altitude: Double, accuracy: Double, precision: Double) {
        self.timestamp = timestamp
        self.altitude = altitude
        self.accuracy = accuracy
        self.precision = precision
    }
}
