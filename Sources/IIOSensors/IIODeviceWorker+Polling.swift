import AgentPorts
internal import CLibIIO
import MotionModel

#if canImport(Glibc)
import Glibc
#endif

extension IIODeviceWorker {
    /// The fallback for devices without a buffer (ak8975 without a trigger, bmp280): read `_raw` (or the
    /// driver-scaled `_input`) of each channel at the planned rate, timestamped on CLOCK_MONOTONIC.
    func poll(
        device: OpaquePointer,
        handles: [IIOChannelHandle],
        plan: DevicePlan,
        rateHz: Double,
        matrices: [SensorType: MountMatrix],
        generation: Int
    ) throws(IIOError) {
        let slots = try slots(handles: handles, plan: plan, forBuffer: false)
        guard slots.contains(where: { $0.role != .temperature }) else {
            throw IIOError(
                operation: "poll \(info.id) (\(info.name))",
                code: EINVAL,
                message: "no readable channel for \(plan.sensors.map(\.rawValue).sorted())",
                fix: "the driver offers neither _raw nor _input for these sensors"
            )
        }
        var values = ScanValues(roles: slots)
        let resolved = ResolvedMatrices(matrices)
        let period = 1 / max(rateHz, 0.001)
        // On the local backend the files stay open for the session (see PolledAttribute); nil: through libiio.
        let deviceID = device.iioDeviceID
        let files: ContiguousArray<PolledAttribute?> =
            uri.hasPrefix("local:")
            ? ContiguousArray(
                slots.map {
                    PolledAttribute(deviceID: deviceID, channel: $0.channel, attribute: $0.pollsRaw ? "raw" : "input")
                }
            ) : ContiguousArray(repeating: nil, count: slots.count)
        var next = TimestampClock.monotonicNow()
        // The rate the reads achieve, over windows of about 5 s (status, and one warning when it falls short).
        var windowStart = next
        var windowPolls = 0
        var windowReading = 0.0
        var warned = false
        // Temperature rides along for the record, and changes slowly: read about once a second, not with every
        // sample (each read is a bus transfer; bmp280 even reads the temperature again for every pressure).
        let temperatureEvery = max(1, Int(rateHz.rounded()))
        var polls = 0
        while !planChanged(since: generation) {
            let readStart = TimestampClock.monotonicNow()
            var saturated = false
            let readsTemperature = polls % temperatureEvery == 0
            polls &+= 1
            for (i, slot) in slots.enumerated() {
                if slot.role == .temperature && !readsTemperature { continue }
                var ok: Int32
                if slot.pollsRaw {
                    var raw: Int64 = 0
                    if let file = files[i] {
                        (ok, raw) = file.readInteger()
                    } else {
                        ok = iio_channel_attr_read_longlong(slot.channel, "raw", &raw)
                    }
                    if ok == 0 {
                        values.set(slot.role, slot.value(raw: raw))
                        if let limits = slot.rawLimits, raw == limits.lowerBound || raw == limits.upperBound {
                            saturated = true
                        }
                    }
                } else {
                    var processed = 0.0
                    if let file = files[i] {
                        (ok, processed) = file.readDouble()
                    } else {
                        ok = iio_channel_attr_read_double(slot.channel, "input", &processed)
                    }
                    if ok == 0 { values.set(slot.role, processed) }
                }
                if ok < 0 {
                    if planChanged(since: generation) { return }
                    throw IIOError(
                        operation:
                            "read \(String(cString: iio_channel_get_id(slot.channel))) of \(info.id) (\(info.name))",
                        errno: -ok,
                        fix: "the device stopped answering (unplugged or driver error)"
                    )
                }
            }
            if saturated { counters.saturated += 1 }
            let readEnd = TimestampClock.monotonicNow()
            if let sample = assemble(&values, timestamp: readEnd, matrices: resolved) {
                enqueue(sample)
            }
            flush()
            windowPolls += 1
            windowReading += readEnd - readStart
            if readEnd - windowStart >= 5 {
                let achieved = Double(windowPolls) / (readEnd - windowStart)
                state.update(info.id) { $0.polledRateHz = achieved }
                if !warned && achieved < 0.8 * rateHz {
                    warned = true
                    pollingFellBehind(
                        achievedHz: achieved,
                        plannedHz: rateHz,
                        readSeconds: windowReading / Double(windowPolls)
                    )
                }
                (windowStart, windowPolls, windowReading) = (readEnd, 0, 0)
            }
            next += period
            let now = TimestampClock.monotonicNow()
            if next < now - period { next = now }  // fell behind: skip, don't burst
            control.sleep(seconds: next - now)
        }
    }
}
