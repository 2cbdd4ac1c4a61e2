import AgentPorts

/// One device as status shows it.
package struct IIODeviceStatus: Sendable, Hashable {
    package enum State: Sendable, Hashable {
        /// No stream needs it: buffer disabled.
        case off
        /// Being configured (first start or after a plan change).
        case starting
        /// Delivering samples.
        case running
        /// Failing; retried with back-off. The message names the error.
        case failing(String)
    }

    package var id: String
    package var name: String
    package var state: State
    /// What the plan asked for, Hz.
    package var requestedRateHz: Double
    /// What the hardware runs at: the lowest supported rate at or above the request (clamped to the maximum),
    /// as read back from `sampling_frequency` once written; nil while off.
    package var effectiveRateHz: Double?
    /// Polled devices: complete reads per second over the last few seconds. Below `effectiveRateHz` when the
    /// driver's reads take longer than the period (st_lsm6dsx without its interrupt line switches the sensor
    /// on for every read and waits three sample periods; ak8975 measures on demand and looks 10 ms later).
    package var polledRateHz: Double?
    package var counters: SensorDeviceCounters

    package init(id: String, name: String) {
        self.id = id
        self.name = name
        state = .off
        requestedRateHz = 0
        effectiveRateHz = nil
        polledRateHz = nil
        counters = SensorDeviceCounters()
    }
}
