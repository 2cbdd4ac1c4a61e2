import AgentPorts
internal import CLibIIO
import MotionModel

/// Finds the accelerometer, gyroscope, magnetometer, pressure and temperature channels a libiio context
/// offers, across one or several devices (inv_icm42600 shows accel and gyro as two devices; magnetometers and
/// barometers are separate chips).
package enum IIODiscovery {
    /// Every device with at least one sensor the agent uses, in libiio's order (by device number).
    package static func devices(
        uri: String,
        mountMatrixOverrides: [MountMatrixOverride] = []
    ) throws(IIOError) -> [IIODeviceInfo] {
        let context = try IIOContext(uri: uri)
        return context.devices.compactMap { describe($0, overrides: mountMatrixOverrides) }
    }

    /// Whether `uri` offers an accelerometer or gyroscope; cheap enough for `source.kind: auto`. Any error
    /// (no context, no devices) means no.
    package static func hasIMU(uri: String = "local:") -> Bool {
        guard let context = try? IIOContext(uri: uri) else { return false }
        return context.devices.contains { dev in
            dev.iioChannels.contains { $0.quantity == .acceleration || $0.quantity == .angularVelocity }
        }
    }

    /// The libiio version this build runs against, e.g. `0.24`.
    package static var libraryVersion: String { IIOLibrary.version() }

    static func describe(_ dev: OpaquePointer, overrides: [MountMatrixOverride]) -> IIODeviceInfo? {
        if iio_device_is_trigger(dev) { return nil }
        let id = dev.iioDeviceID
        let name = dev.iioDeviceName
        let handles = dev.iioChannels
        var channels: [IIOChannelInfo] = []
        var sensors: Set<SensorType> = []
        for handle in handles {
            let pollable = handle.hasRaw || handle.hasProcessed
            guard pollable || handle.isScanElement else { continue }
            channels.append(
                IIOChannelInfo(
                    id: handle.id,
                    quantity: handle.quantity,
                    axis: handle.axis,
                    scale: IIOAttribute.double(IIOAttribute.channel(handle.pointer, "scale")) ?? 1,
                    offset: IIOAttribute.double(IIOAttribute.channel(handle.pointer, "offset")) ?? 0,
                    scanFormat: handle.scanFormat,
                    pollable: pollable,
                    isProcessed: handle.hasProcessed && !handle.hasRaw
                )
            )
        }
        let order = IIOQuantity.allCases
        channels.sort {
            (order.firstIndex(of: $0.quantity)!, $0.axis ?? 0) < (order.firstIndex(of: $1.quantity)!, $1.axis ?? 0)
        }
        for quantity in IIOQuantity.allCases {
            guard let sensor = quantity.sensor else { continue }
            let axes = Set(channels.filter { $0.quantity == quantity }.compactMap(\.axis))
            if quantity.isVector ? axes == [0, 1, 2] : channels.contains(where: { $0.quantity == quantity }) {
                sensors.insert(sensor)
            }
        }
        guard !sensors.isEmpty else { return nil }

        let rates = rateAttributes(dev, handles: handles, sensors: sensors)
        let isBuffered = channels.contains { $0.scanFormat != nil && $0.quantity != .timestamp }
        let (acceptsTrigger, current) = dev.iioTrigger
        let trigger = acceptsTrigger ? (current ?? chooseTrigger(for: dev)).map { $0.iioDeviceName } : nil
        var matrices: [SensorType: MountMatrix] = [:]
        var sources: [SensorType: String] = [:]
        for quantity in IIOQuantity.allCases where quantity.isVector {
            guard let sensor = quantity.sensor, sensors.contains(sensor) else { continue }
            let (matrix, source) = mountMatrix(dev, id: id, name: name, quantity: quantity, overrides: overrides)
            matrices[sensor] = matrix
            sources[sensor] = source
        }
        return IIODeviceInfo(
            id: id,
            name: name,
            channels: channels,
            sensors: sensors,
            supportedRates: rates.combined,
            rateByQuantity: rates.byQuantity,
            hasRateAttribute: rates.hasAttribute,
            currentRateHz: rates.current,
            isBuffered: isBuffered,
            trigger: trigger,
            acceptsTrigger: acceptsTrigger,
            timestampClock: channels.contains { $0.quantity == .timestamp }
                ? (IIOAttribute.device(dev, "current_timestamp_clock") ?? "realtime") : nil,
            mountMatrices: matrices,
            mountMatrixSources: sources
        )
    }

    struct Rates {
        var combined: SupportedRates
        var byQuantity: [IIOQuantity: SupportedRates]
        var hasAttribute: Bool
        var current: Double?
    }

    /// `sampling_frequency(_available)` on the device, or per type (`in_accel_sampling_frequency`, which
    /// libiio shows as a channel attribute of each accel channel).
    static func rateAttributes(_ dev: OpaquePointer, handles: [IIOChannelHandle], sensors: Set<SensorType>) -> Rates {
        if let currentText = IIOAttribute.device(dev, "sampling_frequency") {
            let current = IIOAttribute.double(currentText)
            let available = IIOAttribute.device(dev, "sampling_frequency_available").flatMap {
                SupportedRates(sysfs: $0)
            }
            return Rates(
                combined: available ?? current.map { .list([$0]) } ?? .polling,
                byQuantity: [:],
                hasAttribute: true,
                current: current
            )
        }
        var byQuantity: [IIOQuantity: SupportedRates] = [:]
        var current: Double?
        for quantity in IIOQuantity.allCases {
            guard let sensor = quantity.sensor, sensors.contains(sensor),
                let handle = handles.first(where: {
                    $0.quantity == quantity && iio_channel_find_attr($0.pointer, "sampling_frequency") != nil
                })
            else { continue }
            let now = IIOAttribute.double(IIOAttribute.channel(handle.pointer, "sampling_frequency"))
            current = current ?? now
            let available = IIOAttribute.channel(handle.pointer, "sampling_frequency_available").flatMap {
                SupportedRates(sysfs: $0)
            }
            let hidRates: SupportedRates? = hidSensorDrivers.contains(dev.iioDeviceName) ? hidSensorRates : nil
            byQuantity[quantity] = available ?? hidRates ?? now.map { .list([$0]) } ?? .polling
        }
        let ordered = IIOQuantity.allCases.compactMap { byQuantity[$0] }
        guard var combined = ordered.first else {
            return Rates(combined: .polling, byQuantity: [:], hasAttribute: false, current: nil)
        }
        for rates in ordered.dropFirst() { combined = combined.common(with: rates) }
        return Rates(combined: combined, byQuantity: byQuantity, hasAttribute: true, current: current)
    }

    /// The kernel's HID sensor hub drivers (hid-sensor-accel-3d, -gyro-3d, -magn-3d, -press, -als, …) write
    /// the sensor's report interval in whole milliseconds and list no `sampling_frequency_available`; without
    /// this the agent would only know the rate the hub started at (100 Hz) and never set one (seen on Debian
    /// 12's 6.1 kernel in the system-test VM).
    static let hidSensorDrivers: Set<String> = [
        "accel_3d", "gyro_3d", "magn_3d", "press", "incli_3d", "dev_rotation", "gravity", "als", "temperature",
    ]

    /// The rates a whole number of milliseconds gives exactly (1000 / n for the divisors n of 1000).
    static let hidSensorRates = SupportedRates.list([1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000])

    /// A trigger for a device that has `trigger/current_trigger` but none set: its own data-ready trigger,
    /// which drivers name `<name>-dev<N>` (bmi160, bmc150) or `<name>-trigger` (st_sensors).
    static func chooseTrigger(for dev: OpaquePointer) -> OpaquePointer? {
        guard let ctx = iio_device_get_context(dev) else { return nil }
        let name = dev.iioDeviceName
        let number = dev.iioDeviceID.split(separator: "e").last.map(String.init) ?? ""
        let triggers = (0..<iio_context_get_devices_count(ctx)).compactMap { iio_context_get_device(ctx, $0) }
            .filter { iio_device_is_trigger($0) }
        return triggers.first { $0.iioDeviceName == "\(name)-dev\(number)" }
            ?? triggers.first { $0.iioDeviceName.hasPrefix(name) }
    }

    /// The configured override, else `in_<type>_mount_matrix`, else `in_mount_matrix` (which libiio 0.24
    /// shows as channel `mount`, attribute `matrix`), else `mount_matrix`, else identity.
    static func mountMatrix(
        _ dev: OpaquePointer,
        id: String,
        name: String,
        quantity: IIOQuantity,
        overrides: [MountMatrixOverride]
    ) -> (MountMatrix, String) {
        guard let sensor = quantity.sensor else { return (.identity, "none (identity)") }
        if let override = overrides.first(where: { $0.matches(deviceID: id, name: name, sensor: sensor) }) {
            return (override.matrix, "override")
        }
        let prefix = quantity == .acceleration ? "accel" : quantity == .angularVelocity ? "anglvel" : "magn"
        if let handle = dev.iioChannels.first(where: { $0.quantity == quantity }),
            let text = IIOAttribute.channel(handle.pointer, "mount_matrix"),
            let matrix = MountMatrix(parsing: text)
        {
            return (matrix, "in_\(prefix)_mount_matrix")
        }
        if let mount = iio_device_find_channel(dev, "mount", false),
            let text = IIOAttribute.channel(mount, "matrix"),
            let matrix = MountMatrix(parsing: text)
        {
            return (matrix, "in_mount_matrix")
        }
        if let text = IIOAttribute.device(dev, "mount_matrix"), let matrix = MountMatrix(parsing: text) {
            return (matrix, "mount_matrix")
        }
        return (.identity, "none (identity)")
    }
}
