/// The temperature a sensor reported: the IMU's die or the barometer's (`{root}/temperature`). Core Motion has
/// no counterpart.
public struct TemperatureData: Sendable, Equatable, Codable {
    /// s on the sample clock.
    public var timestamp: Double
    /// °C.
    public var temperatureC: Double

    @inlinable
    public init(timestamp: Double, temperatureC: Double) {
        self.timestamp = timestamp
        self.temperatureC = temperatureC
    }
}
