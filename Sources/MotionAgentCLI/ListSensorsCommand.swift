import AgentConfig
import AgentPorts
import ArgumentParser
import IIOSensors
import MotionModel

/// `motion-agent list-sensors [--config FILE] [--uri URI]`: what libiio finds, the rates each device accepts
/// and which stream every channel would feed — as the agent would see it: the configuration's
/// `source.iio.uri`, mount-matrix overrides and device selection apply.
struct ListSensorsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list-sensors",
        abstract: "Lists the IIO sensors found, their rates and the streams each channel feeds.",
        discussion: """
            With a configuration (--config FILE, else ./config.yaml or /etc/motion-agent/config.yaml when one \
            exists), source.iio.uri, source.iio.mount_matrix and source.iio.devices apply, and devices the \
            agent would not use are marked. --uri wins over the configuration's URI.
            """
    )

    @Option(
        name: .long,
        help: "libiio context URI: local:, ip:HOST[:PORT], usb:…, serial:… (default: source.iio.uri, else local:)"
    )
    var uri: String?

    @OptionGroup var configuration: ConfigurationOptions

    func run() throws {
        let loaded = try configuration.loadIfPresent(refusing: "list-sensors does not run")
        let settings = loaded?.0.source.iio ?? IIOSourceSettings()
        let configPath = loaded?.path
        let uri = uri ?? settings.uri
        let devices = try IIODiscovery.devices(
            uri: uri,
            mountMatrixOverrides: SourceFactory.mountMatrixOverrides(settings)
        )
        let selected = Set(try IIOSensorSource.select(settings.devices, from: devices, uri: uri).map(\.id))
        print("libiio \(IIODiscovery.libraryVersion), context \"\(uri)\": \(devices.count) sensor device(s)")
        if let configPath { print("source.iio settings from \(configPath)") }
        if devices.isEmpty {
            print("No accelerometer, gyroscope, magnetometer or pressure channel found.")
            return
        }
        for device in devices {
            print("")
            print(Self.describe(device))
            if !selected.contains(device.id) {
                print("  not used: source.iio.devices (\(settings.devices.joined(separator: ", "))) does not name it")
            }
        }
    }

    static func describe(_ device: IIODeviceInfo) -> String {
        var lines: [String] = []
        let sensors = device.sensors.map(\.rawValue).sorted().joined(separator: ", ")
        lines.append("\(device.id)  \(device.name)  [\(sensors)]")
        var capture = device.isBuffered ? "buffered" : "polled (no buffer)"
        if device.isBuffered {
            capture += device.acceptsTrigger ? ", trigger \(device.trigger ?? "none available")" : ", no trigger needed"
            capture +=
                device.hasTimestamp
                ? ", timestamps (\(device.timestampClock ?? "realtime") clock)" : ", timestamps interpolated"
        }
        lines.append("  capture: \(capture)")
        var rates = "  rates (Hz): \(rateText(device.supportedRates))"
        if !device.hasRateAttribute { rates += " (paced by the agent; the driver has no sampling_frequency)" }
        if let current = device.currentRateHz { rates += ", now \(number(current))" }
        lines.append(rates)
        for (quantity, perType) in device.rateByQuantity.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            lines.append("    in_\(quantity.sysfsType)_sampling_frequency: \(rateText(perType))")
        }
        for channel in device.channels {
            let padded = channel.id + String(repeating: " ", count: max(0, 12 - channel.id.count))
            var line = "  \(padded) → \(channel.quantity.stream)"
            if channel.isProcessed {
                line += "; processed (_input, \(channel.quantity.kernelUnit))"
            } else if channel.quantity != .timestamp {
                line += "; scale \(number(channel.scale)) \(channel.quantity.kernelUnit)/count"
                if channel.offset != 0 { line += ", offset \(number(channel.offset))" }
            }
            if let format = channel.scanFormat { line += "; scan \(format)" }
            lines.append(line)
        }
        for sensor in SensorType.allCases {
            guard let matrix = device.mountMatrices[sensor] else { continue }
            let source = device.mountMatrixSources[sensor] ?? "?"
            lines.append("  mount matrix (\(sensor.rawValue)): \(matrix)  [\(source)]")
        }
        return lines.joined(separator: "\n")
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private static func rateText(_ rates: SupportedRates) -> String {
        switch rates {
        case .list(let values): values.map(number).joined(separator: ", ")
        case .range(let min, let step, let max):
            step > 0
                ? "\(number(min)) to \(number(max)) in steps of \(number(step))" : "\(number(min)) to \(number(max))"
        }
    }
}
