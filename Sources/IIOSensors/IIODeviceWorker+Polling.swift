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
        while !planChanged(since: generation) {
            var saturated = false
            for (i, slot) in slots.enumerated() {
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
            if let sample = assemble(&values, timestamp: TimestampClock.monotonicNow(), matrices: resolved) {
                enqueue(sample)
            }
            flush()
            next += period
            let now = TimestampClock.monotonicNow()
            if next < now - period { next = now }  // fell behind: skip, don't burst
            control.sleep(seconds: next - now)
        }
    }
}
