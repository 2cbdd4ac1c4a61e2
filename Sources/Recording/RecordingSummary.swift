import AgentPorts
import MotionModel

/// What a recording holds — sample count, sensors, time span and each sensor's rate — gathered one sample at
/// a time, so a recording can be described without keeping it in memory.
package struct RecordingSummary: Sendable {
    package private(set) var sampleCount = 0
    package private(set) var sensors: Set<SensorType> = []
    package private(set) var firstTimestamp: Double?
    package private(set) var lastTimestamp: Double?
    /// The first timestamps of each sensor, enough for a robust median gap.
    private var timestamps: [SensorType: [Double]] = [:]
    private static let timestampsKept = 2001

    package init() {}

    package mutating func add(_ sample: IMUSample) {
        sampleCount += 1
        if firstTimestamp == nil { firstTimestamp = sample.timestamp }
        lastTimestamp = sample.timestamp
        for sensor in SensorType.allCases where sample.has(sensor) {
            sensors.insert(sensor)
            if timestamps[sensor, default: []].count < Self.timestampsKept {
                timestamps[sensor, default: []].append(sample.timestamp)
            }
        }
    }

    /// The median rate at which `sensor` was recorded, Hz (robust to the odd gap).
    package func rateHz(of sensor: SensorType) -> Double? {
        guard let times = timestamps[sensor], times.count > 1 else { return nil }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.filter { $0 > 0 }.sorted()
        guard !gaps.isEmpty else { return nil }
        // Milli-hertz resolution: enough to tell 285.714 Hz from 285.7, and 100 stays 100.
        return (1000 / gaps[gaps.count / 2]).rounded() / 1000
    }

    /// The rate of the fastest sensor, Hz: the one rate a replayed recording's device offers.
    package var fastestRateHz: Double? { sensors.compactMap { rateHz(of: $0) }.max() }

    /// Seconds from the first sample to the last.
    package var duration: Double {
        guard let firstTimestamp, let lastTimestamp else { return 0 }
        return lastTimestamp - firstTimestamp
    }
}
