/// One water-submersion measurement, like Core Motion's `CMWaterSubmersionMeasurement`, with the state
/// and event types of `CMWaterSubmersionEvent`.
public struct SubmersionData: Sendable, Equatable, Codable {
    /// Core Motion's `CMWaterSubmersionMeasurement.SubmersionState` (its `unknown` and `sensorDepthError`
    /// are not produced: before the first pressure sample there is no measurement at all).
    public enum State: String, Sendable, Equatable, Codable, CaseIterable {
        case notSubmerged
        case submergedShallow
        case submergedDeep
        case approachingMaxDepth
        case pastMaxDepth
    }

    /// A change of submersion state, like `CMWaterSubmersionEvent`.
    public struct Event: Sendable, Equatable, Codable {
        /// s on the sample clock.
        public var date: Double
        public var state: State

        @inlinable
        public init(date: Double, state: State) {
            self.date = date
            self.state = state
        }
    }

    /// s on the sample clock.
    public var timestamp: Double
    public var state: State
    /// Metres below the surface (0 when not submerged).
    public var depth: Double
    /// Pressure at the sensor, kPa.
    public var pressureKPa: Double
    /// The air pressure at the surface, tracked while not submerged, kPa.
    public var surfacePressureKPa: Double
    /// Water (or air) temperature at the sensor, °C; nil when the device has no temperature sensor.
    public var temperatureC: Double?

    @inlinable
    public init(
        timestamp: Double,
        state: State,
        depth: Double,
        pressureKPa: Double,
        surfacePressureKPa: Double,
        temperatureC: Double?
    ) {
        self.timestamp = timestamp
        self.state = state
        self.depth = depth
        self.pressureKPa = pressureKPa
        self.surfacePressureKPa = surfacePressureKPa
        self.temperatureC = temperatureC
    }
}
