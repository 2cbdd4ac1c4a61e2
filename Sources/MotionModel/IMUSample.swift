/// One instant of calibrated sensor data, in the agent's units and Core Motion's conventions.
///
/// A field is `nil` when that sensor gave no sample at this instant, so sensors running at different
/// rates share one sequence (exactly like a row of the record/replay CSV, which has an empty cell there).
///
/// - `acceleration`: g, Core Motion's sign — gravity + user acceleration, so a device lying face up at rest
///   reads (0, 0, −1). This is the opposite of the kernel's and Android's specific force:
///   `acceleration = −specificForce / 9.80665`.
/// - `rotationRate`: rad/s, right-handed about the device axes, raw (bias included).
/// - `magneticField`: µT, raw (hard and soft iron included).
/// - `pressureKPa`: kPa; `temperatureC`: °C.
public struct IMUSample: Sendable, Equatable {
    /// Seconds on the sensor clock (Core Motion's `CMLogItem.timestamp`): monotonic, arbitrary origin.
    public var timestamp: Double
    public var acceleration: Vector3?
    public var rotationRate: Vector3?
    public var magneticField: Vector3?
    public var pressureKPa: Double?
    public var temperatureC: Double?

    @inlinable
    public init(
        timestamp: Double,
        acceleration: Vector3? = nil,
        rotationRate: Vector3? = nil,
        magneticField: Vector3? = nil,
        pressureKPa: Double? = nil,
        temperatureC: Double? = nil
    ) {
        self.timestamp = timestamp
        self.acceleration = acceleration
        self.rotationRate = rotationRate
        self.magneticField = magneticField
        self.pressureKPa = pressureKPa
        self.temperatureC = temperatureC
    }

    /// Whether this sample carries a reading of `sensor`.
    @inlinable
    public func has(_ sensor: SensorType) -> Bool {
        switch sensor {
        case .accelerometer: acceleration != nil
        case .gyroscope: rotationRate != nil
        case .magnetometer: magneticField != nil
        case .barometer: pressureKPa != nil
        }
    }
}

/// Standard gravity, m/s² (CGPM 1901; the kernel's IIO drivers and Core Motion's g both use it).
public let standardGravity = 9.80665
