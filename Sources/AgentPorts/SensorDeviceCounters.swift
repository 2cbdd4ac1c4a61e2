/// What one sensor device's acquisition has seen since the source started: the hardware's garbage is counted
/// and handled per sample, so operators see it in `{root}/metrics` and the Prometheus file instead of in the
/// log alone.
public struct SensorDeviceCounters: Sendable, Hashable, Codable {
    /// Samples handed to the hub.
    public var samples: UInt64
    /// Readings dropped because the converted value was NaN or infinite (a sample left with no reading is
    /// dropped whole).
    public var nonFinite: UInt64
    /// Samples at the channel's raw minimum or maximum (the sensor clipped; delivered).
    public var saturated: UInt64
    /// Samples dropped because their timestamp did not advance.
    public var timestampsBackwards: UInt64
    /// Buffer refills, polls or set-ups that failed.
    public var readErrors: UInt64
    /// Times the device delivered again after failing.
    public var recoveries: UInt64

    public init(
        samples: UInt64 = 0,
        nonFinite: UInt64 = 0,
        saturated: UInt64 = 0,
        timestampsBackwards: UInt64 = 0,
        readErrors: UInt64 = 0,
        recoveries: UInt64 = 0
    ) {
        self.samples = samples
        self.nonFinite = nonFinite
        self.saturated = saturated
        self.timestampsBackwards = timestampsBackwards
        self.readErrors = readErrors
        self.recoveries = recoveries
    }
}
