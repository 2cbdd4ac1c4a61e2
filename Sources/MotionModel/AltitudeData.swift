/// Change in altitude since the altimeter started, like Core Motion's `CMAltitudeData`.
public struct AltitudeData: Sendable, Equatable, Codable {
    /// s on the sample clock.
    public var timestamp: Double
    /// Metres above (positive) or below the altitude at the first pressure sample.
    public var relativeAltitude: Double
    /// The smoothed barometric pressure, kPa.
    public var pressureKPa: Double

    @inlinable
    public init(timestamp: Double, relativeAltitude: Double, pressureKPa: Double) {
        self.timestamp = timestamp
        self.relativeAltitude = relativeAltitude
        self.pressureKPa = pressureKPa
    }
}
