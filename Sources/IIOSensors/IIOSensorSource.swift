import AgentPorts
import Logging
import MotionModel

/// Real IMU hardware through libiio 0.24: the devices a context offers (local sysfs, iiod over `ip:`, `usb:`,
/// `serial:`), each acquired on its own thread.
///
/// Samples are partial: each device delivers `IMUSample`s with only the fields it measures (inv_icm42600's
/// accel device gives acceleration and temperature, its gyro device rotation rate and temperature), all
/// timestamped on CLOCK_MONOTONIC seconds so samples from separate devices line up; the hub merges them.
/// Devices with `in_timestamp` use it (converted from `current_timestamp_clock`); others spread each refill
/// evenly between the previous refill's last sample and this refill's completion (at the nominal period after
/// a gap); polled devices are stamped when read. Calls into the sink (samples and faults) are serialised: one
/// device's refill at a time, in timestamp order per device.
///
/// Faults: a device that fails (refill error or timeout, vanished from the context, refused rate) is reported
/// once with `recovered: false`, retried with back-off on a fresh context (found again by id, or by name
/// if it came back under another number), and reported with `recovered: true` when it delivers again; the
/// other devices keep running. Garbage is counted in `status()` (see `SensorDeviceCounters`).
package final class IIOSensorSource: SensorSource {
    package let uri: String
    /// The discovered devices with channels, scales, rates and mount matrices.
    package let deviceInfos: [IIODeviceInfo]
    package let devices: [SensorDevice]
    package var summary: String {
        "IIO at \"\(uri)\": " + deviceInfos.map { "\($0.id) \($0.name)" }.joined(separator: ", ")
    }

    private let state: IIOSourceState
    private let retry: IIORetryPolicy
    private let logger: Logger

    /// Opens the context once to discover the devices.
    /// - Parameters:
    ///   - uri: libiio context URI (`local:`, `ip:HOST[:PORT]`, `usb:…`, `serial:…`).
    ///   - deviceFilter: the devices to use, by id (`iio:device2`) or driver name (`ak8975`, which selects
    ///     every device of that driver); empty: all found (config `source.iio.devices`). The others are
    ///     neither opened nor shown.
    ///   - mountMatrixOverrides: matrices that win over the drivers' (config `source.iio.mount_matrix`).
    ///   - retryPolicy: back-off after a device fault.
    /// - Throws: `IIOError` when the context cannot be opened, offers no accelerometer, gyroscope,
    ///   magnetometer or pressure channel, or a name in `deviceFilter` matches none of them.
    package init(
        uri: String = "local:",
        deviceFilter: [String] = [],
        mountMatrixOverrides: [MountMatrixOverride] = [],
        retryPolicy: IIORetryPolicy = .standard,
        logger: Logger
    ) throws(IIOError) {
        let all = try IIODiscovery.devices(uri: uri, mountMatrixOverrides: mountMatrixOverrides)
        let found = try Self.select(deviceFilter, from: all, uri: uri)
        guard !found.isEmpty else {
            throw IIOError(
                operation: "find IIO sensors at \"\(uri)\"",
                code: 0,
                message: "no accelerometer, gyroscope, magnetometer or pressure channel was found",
                fix: "check that the sensor drivers are loaded (iio_info -u \(uri)), or use source.kind: simulated"
            )
        }
        self.uri = uri
        deviceInfos = found
        devices = found.map(\.sensorDevice)
        state = IIOSourceState(devices: found)
        retry = retryPolicy
        self.logger = logger
        for info in found {
            logger.info(
                "IIO device found",
                metadata: [
                    "iio.device": "\(info.id)", "iio.driver": "\(info.name)",
                    "sensors": "\(info.sensors.map(\.rawValue).sorted().joined(separator: ","))",
                    "rates": "\(info.supportedRates.summary)",
                ]
            )
        }
    }

    /// The devices `filter` (config `source.iio.devices`: ids or driver names) names, in discovery order;
    /// every device when it is empty.
    /// - Throws: `IIOError` naming every entry that matches no device, with the devices found.
    package static func select(
        _ filter: [String],
        from all: [IIODeviceInfo],
        uri: String
    ) throws(IIOError)
        -> [IIODeviceInfo]
    {
        guard !filter.isEmpty else { return all }
        let unknown = filter.filter { name in !all.contains { $0.id == name || $0.name == name } }
        guard unknown.isEmpty else {
            let offered = all.isEmpty ? "none" : all.map { "\($0.id) (\($0.name))" }.joined(separator: ", ")
            throw IIOError(
                operation: "select the IIO devices \(filter.joined(separator: ", "))",
                code: 0,
                message: "no sensor device \(unknown.joined(separator: ", ")) at \"\(uri)\"; found: \(offered)",
                fix: "correct source.iio.devices in config.yaml (ids or driver names; motion-agent list-sensors "
                    + "shows them), or leave it empty to use every device"
            )
        }
        return all.filter { info in filter.contains { $0 == info.id || $0 == info.name } }
    }

    /// Stores the plan and wakes each device whose plan changed; its thread writes the rate (the lowest
    /// supported rate at or above the request, clamped), reconfigures the channels and restarts the buffer,
    /// or disables the buffer when the plan is off.
    /// - Throws: `IIOError` naming a device id the source does not have.
    package func apply(_ plan: AcquisitionPlan) throws {
        for id in plan.devices.keys where !deviceInfos.contains(where: { $0.id == id }) {
            throw IIOError(
                operation: "apply the acquisition plan",
                code: 0,
                message: "no IIO device \(id) at \"\(uri)\"",
                fix: "use one of \(deviceInfos.map(\.id).joined(separator: ", "))"
            )
        }
        var effective: [String: Double] = [:]
        for info in deviceInfos {
            if let devicePlan = plan.devices[info.id], !devicePlan.isOff {
                effective[info.id] = info.supportedRates.lowest(atLeast: devicePlan.rateHz)
            }
        }
        let changed = state.apply(plan.devices, effectiveRates: effective)
        let workers = activeWorkers.withLock { $0 }
        for id in changed { workers[id]?.control.poke() }
    }

    /// Every device's state, rates and counters.
    package func status() -> [IIODeviceStatus] {
        state.statuses()
    }

    package func deviceCounters() -> [String: SensorDeviceCounters] {
        Dictionary(state.statuses().map { ($0.id, $0.counters) }, uniquingKeysWith: { first, _ in first })
    }

    /// Acquires until the task is cancelled: one thread per device, each retrying by itself after faults.
    package func run(into sink: SampleSink) async throws {
        guard state.beginRun() else {
            throw IIOError(
                operation: "run the IIO source",
                code: 0,
                message: "it is already running",
                fix: "run one acquisition per source"
            )
        }
        defer { state.endRun() }
        let delivery = DeliveryGate()
        let workers = deviceInfos.map {
            IIODeviceWorker(
                info: $0,
                uri: uri,
                state: state,
                sink: sink,
                delivery: delivery,
                retry: retry,
                logger: logger
            )
        }
        activeWorkers.withLock { map in
            for worker in workers { map[worker.info.id] = worker }
        }
        defer { activeWorkers.withLock { $0.removeAll() } }
        let latch = RunLatch(count: workers.count)
        var started = 0
        do {
            for worker in workers {
                try AcquisitionThread.start(name: "iio \(worker.info.id)") {
                    worker.main()
                    latch.arrive()
                }
                started += 1
            }
        } catch {
            for worker in workers { worker.control.stop() }
            for _ in started..<workers.count { latch.arrive() }
            await latch.wait()
            throw error
        }
        await withTaskCancellationHandler {
            await latch.wait()
        } onCancel: {
            for worker in workers { worker.control.stop() }
        }
    }

    private let activeWorkers = ActiveWorkers()
}
