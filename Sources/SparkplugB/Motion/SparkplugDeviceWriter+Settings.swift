extension SparkplugDeviceWriter {
    /// The stream's settings (`MotionSparkplug.Config`), after its `dataCount` data metrics.
    package mutating func record(
        enabled: Bool,
        rateHz: Double,
        effectiveRateHz: Double,
        dataCount: Int,
        timeMs t: UInt64
    ) {
        set(dataCount + MotionSparkplug.Config.enabled.rawValue, .boolean(enabled), timestampMs: t)
        set(dataCount + MotionSparkplug.Config.rateHz.rawValue, .double(rateHz), timestampMs: t)
        set(dataCount + MotionSparkplug.Config.effectiveRateHz.rawValue, .double(effectiveRateHz), timestampMs: t)
    }
}
