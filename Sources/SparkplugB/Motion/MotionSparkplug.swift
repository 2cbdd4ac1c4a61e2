import MotionModel

/// How MotionAgent appears to a Sparkplug host (docs/sparkplug.md): the agent is the edge node (its id is
/// `device.id`), and each stream it carries is a device named like the stream and its native topic
/// (`accelerometer`, `device-motion`, …). Metric names are the JSON field paths of the native payloads with `/`
/// as the folder separator (`attitude/roll`, `magneticField/field/x`), Core Motion's names and units
/// (docs/payloads.md), so a value has one name on both sides. Every device ends with its stream's settings
/// (`config/…`), which hosts may write only where the operator allows it.
///
/// Sensor streams (raw sensors, device motion) carry 32-bit floats — the precision of the sensors and of the
/// native binary batches, at half the bytes; the slow streams carry doubles. The streams, their metrics and the
/// writers that fill them are generated from the stream declarations (MotionSparkplug+Catalog.swift,
/// SparkplugDeviceWriter+Motion.swift).
package enum MotionSparkplug {
    /// The settings every stream device ends with, after its data metrics.
    package enum Config: Int, CaseIterable {
        case enabled
        case rateHz
        case effectiveRateHz

        package var definition: SparkplugMetricDefinition {
            switch self {
            case .enabled:
                SparkplugMetricDefinition(
                    "config/enabled",
                    .boolean,
                    description: "whether the stream publishes (streams.<name>.enabled)",
                    isWritable: true
                )
            case .rateHz:
                SparkplugMetricDefinition(
                    "config/rateHz",
                    .double,
                    unit: "Hz",
                    description: "the rate the stream asks for (streams.<name>.rate_hz)",
                    isWritable: true
                )
            case .effectiveRateHz:
                SparkplugMetricDefinition(
                    "config/effectiveRateHz",
                    .double,
                    unit: "Hz",
                    description: "the rate the hardware gives the stream"
                )
            }
        }
    }

    /// The device of `stream`: its data metrics, then `Config`'s; nil for a name that is not a stream.
    package static func device(for stream: String) -> SparkplugDeviceDefinition? {
        guard let data = dataMetrics(of: stream) else { return nil }
        return SparkplugDeviceDefinition(id: stream, metrics: data + Config.allCases.map(\.definition))
    }

    /// Where a stream's settings start among its device's metrics.
    package static func configIndex(_ config: Config, stream: String) -> Int? {
        dataMetrics(of: stream).map { $0.count + config.rawValue }
    }

    /// The edge node's catalog for the streams the operator chose (`sparkplug.streams`), in `streams` order.
    package static func catalog(
        streams chosen: [String],
        nodeMetrics: [SparkplugMetricDefinition] = []
    ) throws(SparkplugError) -> SparkplugCatalog {
        for name in chosen where device(for: name) == nil {
            throw SparkplugError(
                .invalidCatalog,
                "\"\(name)\" is not a stream Sparkplug can carry: use \(streams.joined(separator: ", "))"
            )
        }
        return try SparkplugCatalog(
            nodeMetrics: nodeMetrics,
            devices: streams.filter(chosen.contains).compactMap(device(for:))
        )
    }

    /// Milliseconds since the Unix epoch from Unix seconds (the agent's `time`).
    @inline(__always)
    package static func milliseconds(_ unixSeconds: Double) -> UInt64 {
        unixSeconds > 0 ? UInt64((unixSeconds * 1000).rounded()) : 0
    }
}
