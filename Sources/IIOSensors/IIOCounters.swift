/// What one device's acquisition has seen since the source was created. Garbage from the hardware is
/// counted here and handled (dropped or passed on, as each field says), never a crash.
public struct IIOCounters: Sendable, Hashable {
    /// Samples handed to the sink.
    public var samples = 0
    /// Fields dropped because the converted value was NaN or infinite (a sample left with no field is
    /// dropped whole).
    public var nonFinite = 0
    /// Samples with a count at the channel's raw minimum or maximum (the sensor clipped). They are delivered:
    /// a clipped reading is still the best one there is, and the count tells status the range is too small.
    public var saturated = 0
    /// Samples dropped because their timestamp did not advance past the previous one.
    public var timestampsBackwards = 0
    /// Refills, polls or set-ups that failed.
    public var readErrors = 0
    /// Times the device delivered again after failing.
    public var recoveries = 0

    public init() {}
}
