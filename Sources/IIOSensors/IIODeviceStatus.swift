import AgentPorts

/// One device as status shows it.
public struct IIODeviceStatus: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// No stream needs it: buffer disabled.
        case off
        /// Being configured (first start or after a plan change).
        case starting
        /// Delivering samples.
        case running
        /// Failing; retried with back-off. The message names the error.
        case failing(String)
    }

    public var id: String
    public var name: String
    public var state: State
    /// What the plan asked for, Hz.
    public var requestedRateHz: Double
    /// What the hardware runs at: the lowest supported rate at or above the request (clamped to the maximum),
    /// as read back from `sampling_frequency` once written; nil while off.
    public var effectiveRateHz: Double?
    /// Polled devices: complete reads per second over the last few seconds. Below `effectiveRateHz` when the
    /// driver's reads take longer than the period (st_lsm6dsx without its interrupt line switches the sensor
    /// on for every read and waits three sample periods; ak8975 measures on demand and looks 10 ms later).
    public var polledRateHz: Double?
    public var counters: SensorDeviceCounters

    public init(id: String, name: String) {
        self.id = id
        self.name = name
        state = .off
        requestedRateHz = 0
        effectiveRateHz = nil
        polledRateHz = nil
        counters = SensorDeviceCounters()
    }
}
