import AgentPorts
internal import CLibIIO
import Logging
import MotionModel
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One device's acquisition loop, on its own thread: open a context, configure rate and channels, refill
/// and demultiplex (or poll), deliver; on an error report a fault, back off, and start over with a fresh
/// context (a device that was unplugged and re-probed is found again by id, or by name).
///
/// `@unchecked Sendable`: everything below `control` is touched only by the worker's own thread; the
/// control path reaches it only through `control` and `state`, which lock.
final class IIODeviceWorker: @unchecked Sendable {
    let info: IIODeviceInfo
    let uri: String
    let control = WorkerControl()
    let state: IIOSourceState
    private let sink: any SampleSink
    private let delivery: DeliveryGate
    let retry: IIORetryPolicy
    private var logger: Logger

    // Thread-confined state.
    var counters = SensorDeviceCounters()
    private var failure: String?
    var lastTimestamp = -Double.infinity
    /// The driver's timestamp channel stopped advancing (a driver bug): its scans are timed on arrival instead,
    /// for the rest of the worker's life.
    private(set) var timestampChannelFrozen = false
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: ScanSlot.scratchBytes, alignment: 8)
    private var pending: ContiguousArray<IMUSample> = []

    init(
        info: IIODeviceInfo,
        uri: String,
        state: IIOSourceState,
        sink: any SampleSink,
        delivery: DeliveryGate,
        retry: IIORetryPolicy,
        logger: Logger
    ) {
        self.info = info
        self.uri = uri
        self.state = state
        self.sink = sink
        self.delivery = delivery
        self.retry = retry
        var logger = logger
        logger[metadataKey: "iio.device"] = "\(info.id)"
        logger[metadataKey: "iio.driver"] = "\(info.name)"
        self.logger = logger
        // Counters run for the life of the source, across runs.
        counters = state.counters(for: info.id)
        pending.reserveCapacity(1024)
    }

    deinit {
        scratch.deallocate()
    }

    /// The thread body: runs until `control.stop()`.
    func main() {
        var delay = retry.initialDelay
        while !control.isStopped {
            let (plan, generation) = state.plan(for: info.id)
            if plan.isOff {
                control.sleep(seconds: 3600)
                continue
            }
            state.update(info.id) { if case .failing = $0.state {} else { $0.state = .starting } }
            do {
                try session(plan: plan, generation: generation)
                delay = retry.initialDelay
            } catch {
                counters.readErrors += 1
                let text = "\(error)"
                let message = text.contains(info.id) ? text : "\(info.id) (\(info.name)): \(text)"
                if failure == nil {
                    logger.error("IIO device failed; retrying with back-off", metadata: ["error": "\(error)"])
                    report(SourceFault(deviceID: info.id, message: message, recovered: false))
                } else {
                    logger.debug("IIO device still failing", metadata: ["error": "\(error)"])
                }
                failure = message
                state.update(info.id) { [counters] in
                    $0.state = .failing(message)
                    $0.counters = counters
                }
                control.sleep(seconds: delay)
                delay = min(delay * 2, retry.maximumDelay)
            }
        }
    }

    /// Switches the worker to arrival times for good, and says so once.
    func timestampChannelFroze() {
        guard !timestampChannelFrozen else { return }
        timestampChannelFrozen = true
        logger.warning(
            "the driver's in_timestamp does not advance (the same value in consecutive scans): timing the samples on arrival",
            metadata: [
                "fix":
                    "none needed, the samples keep flowing; a driver bug (Linux's hid-sensor-press keeps its first timestamp)"
            ]
        )
    }

    /// A polled device reads slower than planned: said once per session, with what it takes and why.
    func pollingFellBehind(achievedHz: Double, plannedHz: Double, readSeconds: Double) {
        // Reads that fill most of the period are the driver's doing; short reads that still miss it mean the
        // thread was not run in time.
        let fix =
            readSeconds * plannedHz > 0.5
            ? """
            the driver takes that long to read every channel once (a one-shot driver such as st_lsm6dsx waits \
            several of its own sample periods per read): wire the chip's interrupt line so the driver can buffer, \
            or ask for less
            """
            : """
            the reads are quick but the acquisition thread was not run in time: the machine is short of CPU \
            (see the load), or ask for less
            """
        logger.warning(
            "polled reads cannot keep the planned rate",
            metadata: [
                "planned_hz": "\(plannedHz)", "achieved_hz": "\((achievedHz * 10).rounded() / 10)",
                "read_ms": "\((readSeconds * 10000).rounded() / 10)", "fix": "\(fix)",
            ]
        )
    }

    /// The device delivered: clear a failure, once.
    private func markHealthy() {
        guard let previous = failure else { return }
        failure = nil
        counters.recoveries += 1
        logger.notice("IIO device recovered", metadata: ["after": "\(previous)"])
        report(
            SourceFault(deviceID: info.id, message: "\(info.id) (\(info.name)) delivers again", recovered: true)
        )
        state.update(info.id) { $0.state = .running }
    }

    /// Faults go through the same gate as samples, so the sink never sees two callers at once.
    private func report(_ fault: SourceFault) {
        delivery.lock.withLock { _ in sink.report(fault) }
    }

    func planChanged(since generation: Int) -> Bool {
        control.isStopped || state.generation(for: info.id) != generation
    }

    /// One configured run of the device; returns when the plan changes or the source stops, throws on a fault.
    private func session(plan: DevicePlan, generation: Int) throws(IIOError) {
        let context = try IIOContext(uri: uri)
        let device = try findDevice(in: context)
        let rateHz = try applyRate(device: device, plan: plan)
        state.update(info.id) { $0.effectiveRateHz = rateHz }
        let handles = device.iioChannels
        let matrices = info.mountMatrices
        // A triggered-buffer driver with no trigger to give it (ak8975 without an hrtimer trigger) cannot
        // fill its buffer: read it by polling instead.
        if !info.isPolled {
            try captureBuffered(
                context: context,
                device: device,
                handles: handles,
                plan: plan,
                rateHz: rateHz,
                matrices: matrices,
                generation: generation
            )
        } else {
            try poll(
                device: device,
                handles: handles,
                plan: plan,
                rateHz: rateHz,
                matrices: matrices,
                generation: generation
            )
        }
    }

    private func findDevice(in context: IIOContext) throws(IIOError) -> OpaquePointer {
        let all = context.devices
        if let same = all.first(where: { $0.iioDeviceID == info.id && $0.iioDeviceName == info.name }) {
            return same
        }
        let byName = all.filter { $0.iioDeviceName == info.name && !iio_device_is_trigger($0) }
        if byName.count == 1 { return byName[0] }
        throw IIOError(
            operation: "find \(info.id) (\(info.name))",
            code: ENODEV,
            message: "the device is gone from \(uri)",
            fix: "check the sensor's wiring and driver (dmesg); the agent keeps retrying"
        )
    }

    /// The roles to read for a plan: the planned sensors' channels, temperature alongside, and the timestamp.
    func slots(
        handles: [IIOChannelHandle],
        plan: DevicePlan,
        forBuffer: Bool
    ) throws(IIOError) -> ContiguousArray<ScanSlot> {
        var result: ContiguousArray<ScanSlot> = []
        for handle in handles {
            if forBuffer && !handle.isScanElement { continue }
            let role: ScanSlot.Role
            switch (handle.quantity, handle.axis) {
            case (.acceleration, let axis?) where plan.sensors.contains(.accelerometer): role = .acceleration(axis)
            case (.angularVelocity, let axis?) where plan.sensors.contains(.gyroscope): role = .angularVelocity(axis)
            case (.magneticField, let axis?) where plan.sensors.contains(.magnetometer): role = .magneticField(axis)
            case (.pressure, nil) where plan.sensors.contains(.barometer): role = .pressure
            case (.temperature, nil): role = .temperature
            case (.timestamp, _) where forBuffer: role = .timestamp
            default: continue
            }
            // One channel per role (a second temperature or pressure channel would only repeat it).
            if result.contains(where: { $0.role == role }) { continue }
            if role != .timestamp, let scale = ScanSlot.missingScale(of: handle, discovered: info.channels) {
                throw IIOError(
                    operation: "read the scale of \(handle.id) on \(info.id) (\(info.name))",
                    code: ENOENT,
                    message: "the channel has no scale now (discovery read \(scale)): the device is only partly there",
                    fix: "wait for the driver to finish registering the device (dmesg); the agent keeps retrying"
                )
            }
            if let slot = ScanSlot(handle: handle, role: role, forBuffer: forBuffer) { result.append(slot) }
        }
        return result
    }

    /// Builds one sample from the values of a scan, in the agent's units; nil when nothing usable is left.
    @inline(__always)
    func assemble(_ values: inout ScanValues, timestamp: Double, matrices: ResolvedMatrices) -> IMUSample? {
        var sample = IMUSample(timestamp: timestamp)
        if values.has.contains(.acceleration) {
            let v = matrices.acceleration.apply(values.acceleration) * IIOQuantity.acceleration.agentUnitFactor
            if v.isFinite { sample.acceleration = v } else { counters.nonFinite += 1 }
        }
        if values.has.contains(.angularVelocity) {
            let v = matrices.angularVelocity.apply(values.angularVelocity)
            if v.isFinite { sample.rotationRate = v } else { counters.nonFinite += 1 }
        }
        if values.has.contains(.magneticField) {
            let v = matrices.magneticField.apply(values.magneticField) * IIOQuantity.magneticField.agentUnitFactor
            if v.isFinite { sample.magneticField = v } else { counters.nonFinite += 1 }
        }
        if values.has.contains(.pressure) {
            if values.pressure.isFinite { sample.pressureKPa = values.pressure } else { counters.nonFinite += 1 }
        }
        if values.has.contains(.temperature) {
            let c = values.temperature * IIOQuantity.temperature.agentUnitFactor
            if c.isFinite { sample.temperatureC = c } else { counters.nonFinite += 1 }
        }
        guard
            sample.acceleration != nil || sample.rotationRate != nil || sample.magneticField != nil
                || sample.pressureKPa != nil
        else { return nil }
        return sample
    }

    /// Queues a sample unless its time does not advance (counted and dropped: the sink needs order).
    @inline(__always)
    func enqueue(_ sample: IMUSample) {
        guard sample.timestamp > lastTimestamp, sample.timestamp.isFinite else {
            counters.timestampsBackwards += 1
            return
        }
        lastTimestamp = sample.timestamp
        pending.append(sample)
    }

    /// Called after every successful refill or poll: reports a recovery first (the device answers again,
    /// even if what it sent was garbage), hands the queued samples over under the source-wide delivery lock
    /// so the sink sees one thread at a time, and publishes the counters.
    func flush() {
        markHealthy()
        if !pending.isEmpty {
            counters.samples += UInt64(pending.count)
            delivery.lock.withLock { _ in
                for sample in pending { sink.ingest(sample) }
            }
            pending.removeAll(keepingCapacity: true)
        }
        state.update(info.id) { [counters] status in
            status.counters = counters
            if status.state != .running { status.state = .running }
        }
    }
}

/// The mount matrices of one session, resolved per vector quantity.
struct ResolvedMatrices {
    var acceleration = MountMatrix.identity
    var angularVelocity = MountMatrix.identity
    var magneticField = MountMatrix.identity

    init(_ matrices: [SensorType: MountMatrix]) {
        acceleration = matrices[.accelerometer] ?? .identity
        angularVelocity = matrices[.gyroscope] ?? .identity
        magneticField = matrices[.magnetometer] ?? .identity
    }
}

/// The converted values of one scan, in kernel units, before the mount matrix and unit change.
struct ScanValues {
    struct Present: OptionSet {
        let rawValue: UInt8
        static let acceleration = Present(rawValue: 1)
        static let angularVelocity = Present(rawValue: 2)
        static let magneticField = Present(rawValue: 4)
        static let pressure = Present(rawValue: 8)
        static let temperature = Present(rawValue: 16)
        static let timestamp = Present(rawValue: 32)
    }

    var has: Present = []
    var acceleration = Vector3.zero
    var angularVelocity = Vector3.zero
    var magneticField = Vector3.zero
    var pressure = 0.0
    var temperature = 0.0
    var timestampNs: Int64 = 0

    @inline(__always)
    mutating func set(_ role: ScanSlot.Role, _ value: Double) {
        switch role {
        case .acceleration(let axis): acceleration.set(axis, value)
        case .angularVelocity(let axis): angularVelocity.set(axis, value)
        case .magneticField(let axis): magneticField.set(axis, value)
        case .pressure: pressure = value
        case .temperature: temperature = value
        case .timestamp: break
        }
    }

    init(roles: ContiguousArray<ScanSlot>) {
        for slot in roles {
            switch slot.role {
            case .acceleration: has.insert(.acceleration)
            case .angularVelocity: has.insert(.angularVelocity)
            case .magneticField: has.insert(.magneticField)
            case .pressure: has.insert(.pressure)
            case .temperature: has.insert(.temperature)
            case .timestamp: has.insert(.timestamp)
            }
        }
    }
}

extension Vector3 {
    @inline(__always)
    mutating func set(_ axis: Int, _ value: Double) {
        switch axis {
        case 0: x = value
        case 1: y = value
        default: z = value
        }
    }
}

/// Serialises delivery across a source's device threads: the sink sees one caller at a time, one refill's
/// samples in a row.
final class DeliveryGate: Sendable {
    let lock = Mutex(())
}
