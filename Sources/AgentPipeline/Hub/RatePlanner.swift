import AgentPorts
import MotionModel

/// Decides the hardware rates: every device runs at the lowest rate it supports that serves every active
/// stream reading from it, requests above its maximum are clamped, and a device no stream needs is off.
///
/// Pure: it takes what the hardware offers and what the streams ask, and returns the plan and the rates each
/// sensor will deliver. The hub applies the result.
package enum RatePlanner {
    package struct Result: Sendable, Hashable {
        package var plan: AcquisitionPlan
        /// The rate each needed sensor will deliver at, Hz; absent when the sensor is off or missing.
        package var sensorRatesHz: [SensorType: Double]
        /// Which device feeds each sensor (the first device offering it).
        package var sensorDevices: [SensorType: String]
    }

    /// - Parameters:
    ///   - devices: what the source found.
    ///   - demandsHz: for each sensor some active stream needs, the highest rate asked of it.
    package static func plan(devices: [SensorDevice], demandsHz: [SensorType: Double]) -> Result {
        var sensorDevices: [SensorType: String] = [:]
        for device in devices {
            for sensor in SensorType.allCases where device.sensors.contains(sensor) && sensorDevices[sensor] == nil {
                sensorDevices[sensor] = device.id
            }
        }
        var plan = AcquisitionPlan()
        var rates: [SensorType: Double] = [:]
        for device in devices {
            let needed = Set(
                SensorType.allCases.filter { sensor in
                    sensorDevices[sensor] == device.id && (demandsHz[sensor] ?? 0) > 0
                }
            )
            guard let highest = needed.map({ demandsHz[$0] ?? 0 }).max() else {
                plan.devices[device.id] = .off
                continue
            }
            let rate = device.supportedRates.lowest(atLeast: highest)
            plan.devices[device.id] = DevicePlan(rateHz: rate, sensors: needed)
            for sensor in needed { rates[sensor] = rate }
        }
        return Result(plan: plan, sensorRatesHz: rates, sensorDevices: sensorDevices)
    }
}
