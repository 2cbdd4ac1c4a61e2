import AgentPorts
import MotionModel

/// Where a driver offers no rate equal to a stream's request, the device samples at the next rate up it offers
/// and the stream is decimated from it. When that rate is a whole multiple (20 Hz from 100 Hz) the stream is
/// exactly what was asked; otherwise it keeps the requested rate only on average, at uneven intervals (300 Hz
/// from 500 Hz: 2 and 4 ms apart), and the status says so — a setting's note, which `fleet status` also lists
/// as a difference, as it does a clamp. A request above the device's maximum is `AgentStatus.hardwareNotes`.
package enum OfferedRateNotes {
    /// `streams.<stream>.rate_hz` → the note, for every enabled stream delivering its requested rate unevenly
    /// from a device that does not offer it.
    package static func notes(
        settings: [StreamName: StreamSettings],
        effectiveRatesHz: [StreamName: Double],
        planned: RatePlanner.Result,
        devices: [SensorDevice]
    ) -> [String: String] {
        var notes: [String: String] = [:]
        for (name, s) in settings where s.enabled {
            guard let sensor = name.descriptor.pacingSensor, let effective = effectiveRatesHz[name],
                abs(effective - s.rateHz) <= 1e-9,
                let deviceRate = planned.sensorRatesHz[sensor], deviceRate > 0,
                let device = devices.first(where: { $0.id == planned.sensorDevices[sensor] }),
                abs(device.supportedRates.lowest(atLeast: s.rateHz) - s.rateHz) > 1e-9
            else { continue }
            let ratio = deviceRate / s.rateHz
            guard abs(ratio - ratio.rounded()) > 1e-9 else { continue }
            notes["streams.\(name.rawValue).rate_hz"] =
                "\(device.name) (\(device.id)) offers no \(hz(s.rateHz)) Hz: it samples at \(hz(deviceRate)) Hz "
                + "and the stream is decimated to \(hz(s.rateHz)) Hz on average, at uneven intervals; "
                + "for even intervals ask for a rate it offers (\(device.supportedRates.sysfsText))"
        }
        return notes
    }

    private static func hz(_ v: Double) -> String {
        Int(exactly: v).map(String.init) ?? String(v)
    }
}
