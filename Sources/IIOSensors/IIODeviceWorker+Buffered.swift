import AgentPorts
internal import CLibIIO
import MotionModel

#if canImport(Glibc)
import Glibc
#endif

extension IIODeviceWorker {
    /// Identical timestamps in a row after which a device's timestamp channel is taken to be stuck.
    static let frozenTimestampRepeats = 2

    /// Samples per refill: about 20 ms of data (32 at 1.6 kHz), at least 1, at most 1024, so a refill wakes
    /// the thread ~50 times a second at high rates and once per sample at slow ones.
    static func samplesPerRefill(rateHz: Double) -> Int {
        max(1, min(1024, Int((rateHz * 0.02).rounded())))
    }

    func captureBuffered(
        context: IIOContext,
        device: OpaquePointer,
        handles: [IIOChannelHandle],
        plan: DevicePlan,
        rateHz: Double,
        matrices: [SensorType: MountMatrix],
        generation: Int
    ) throws(IIOError) {
        let slots = try slots(handles: handles, plan: plan, forBuffer: true)
        guard slots.contains(where: { $0.role != .timestamp && $0.role != .temperature }) else {
            throw IIOError(
                operation: "enable the scan elements of \(info.id) (\(info.name))",
                code: EINVAL,
                message: "no usable scan element for \(plan.sensors.map(\.rawValue).sorted())",
                fix: "the driver's scan types are not supported (storage must be 8, 16, 32 or 64 bits)"
            )
        }
        for handle in handles where handle.isScanElement { iio_channel_disable(handle.pointer) }
        for slot in slots { iio_channel_enable(slot.channel) }

        if info.acceptsTrigger {
            let (accepts, current) = device.iioTrigger
            if accepts, current == nil, let trigger = IIODiscovery.chooseTrigger(for: device) {
                let rc = iio_device_set_trigger(device, trigger)
                if rc < 0 {
                    throw IIOError(
                        operation: "set trigger \(trigger.iioDeviceName) on \(info.id)",
                        errno: Int32(-rc),
                        fix: "set /sys/bus/iio/devices/\(info.id)/trigger/current_trigger by hand"
                    )
                }
            }
        }

        let samples = Self.samplesPerRefill(rateHz: rateHz)
        // Ask the kernel to wake the reader once per refill, not once per sample (buffer/watermark, where the
        // driver has it). libiio's low-speed path reads until the whole refill is filled either way.
        if IIOAttribute.bufferAttribute(device, "watermark") {
            _ = iio_device_buffer_attr_write_longlong(device, "watermark", Int64(samples))
        }
        let bufferSeconds = Double(samples) / max(rateHz, 0.001)
        let timeout = max(retry.minimumRefillTimeout, 4 * bufferSeconds + 0.5)
        context.setTimeout(milliseconds: UInt32(min(timeout * 1000, Double(UInt32.max / 2))))

        errno = 0
        guard let buffer = iio_device_create_buffer(device, samples, false) else {
            let code = errno == 0 ? EIO : errno
            throw IIOError(
                operation: "create a \(samples)-sample buffer on \(info.id) (\(info.name))",
                errno: code,
                fix: info.acceptsTrigger
                    ? "the device needs a trigger; set trigger/current_trigger (e.g. an hrtimer trigger)"
                    : "check that /dev/\(info.id) exists and is readable by the agent"
            )
        }
        defer {
            control.unregisterBuffer()
            iio_buffer_destroy(buffer)
        }
        guard control.register(buffer: buffer) else { return }

        var clock = TimestampClock(name: info.timestampClock)
        var values = ScanValues(roles: slots)
        let resolved = ResolvedMatrices(matrices)
        let hasTimestamp = values.has.contains(.timestamp)
        // Some drivers fill in_timestamp once and never again (Linux's hid-sensor-press sets it only while it is
        // zero and never clears it, seen on 6.1): every scan then carries the first scan's time and would be
        // dropped as not advancing. After a few identical ones in a row the arrival time is used instead.
        var kernelTimestamps = hasTimestamp && !timestampChannelFrozen
        var previousNs = Int64.min
        var repeats = 0
        let period = 1 / max(rateHz, 0.001)
        var firsts = ContiguousArray<UnsafeRawPointer>(repeating: UnsafeRawPointer(bitPattern: 1)!, count: slots.count)

        while !planChanged(since: generation) {
            let n = iio_buffer_refill(buffer)
            if n < 0 {
                if planChanged(since: generation) { return }
                throw IIOError(
                    operation: "refill the buffer of \(info.id) (\(info.name))",
                    errno: Int32(-n),
                    fix: "the device stopped delivering (unplugged, driver error or missing trigger)"
                )
            }
            let refillTime = TimestampClock.monotonicNow()
            if hasTimestamp { clock.refresh() }
            let step = iio_buffer_step(buffer)
            guard step > 0, let start = iio_buffer_start(buffer), let end = iio_buffer_end(buffer) else { continue }
            let count = (end - start) / step
            // Without in_timestamp, the samples of this refill were taken between the previous refill's last
            // sample and now: spread them evenly over that span, which stays monotonic and follows the
            // hardware's true rate. After a gap (start, stall, lost data) anchor at the nominal period instead.
            let span = refillTime - lastTimestamp
            let interpolatedStep: Double
            let interpolatedStart: Double
            if span > 0 && span < 3 * Double(count) * period {
                interpolatedStep = span / Double(count)
                interpolatedStart = lastTimestamp + interpolatedStep
            } else {
                interpolatedStep = period
                interpolatedStart = refillTime - Double(count - 1) * period
            }
            for (i, slot) in slots.enumerated() {
                firsts[i] = UnsafeRawPointer(iio_buffer_first(buffer, slot.channel)!)
            }
            for k in 0..<count {
                var saturated = false
                for i in 0..<slots.count {
                    let slot = slots[i]
                    let raw = slot.raw(at: firsts[i] + k * step, scratch: scratch)
                    if slot.role == .timestamp {
                        values.timestampNs = raw
                        continue
                    }
                    if let limits = slot.rawLimits, raw == limits.lowerBound || raw == limits.upperBound {
                        saturated = true
                    }
                    values.set(slot.role, slot.value(raw: raw))
                }
                if saturated { counters.saturated += 1 }
                if kernelTimestamps {
                    if values.timestampNs == previousNs {
                        repeats += 1
                        if repeats >= Self.frozenTimestampRepeats {
                            kernelTimestamps = false
                            timestampChannelFroze()
                        }
                    } else {
                        repeats = 0
                        previousNs = values.timestampNs
                    }
                }
                let timestamp =
                    kernelTimestamps
                    ? Double(values.timestampNs) * 1e-9 + clock.offset
                    : interpolatedStart + Double(k) * interpolatedStep
                if let sample = assemble(&values, timestamp: timestamp, matrices: resolved) {
                    enqueue(sample)
                }
            }
            flush()
        }
    }
}
