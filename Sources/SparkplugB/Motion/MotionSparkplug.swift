import MotionModel

/// How MotionAgent appears to a Sparkplug host (docs/sparkplug.md): the agent is the edge node (its id is
/// `device.id`), and each stream it carries is a device named like the stream and its native topic
/// (`accelerometer`, `device-motion`, …). Metric names are the JSON field paths of the native payloads with `/`
/// as the folder separator (`attitude/roll`, `magneticField/field/x`), Core Motion's names and units
/// (docs/payloads.md), so a value has one name on both sides. Every device ends with its stream's settings
/// (`config/…`), which hosts may write only where the operator allows it.
///
/// Sensor streams (raw sensors, device motion) carry 32-bit floats — the precision of the sensors and of the
/// native binary batches, at half the bytes; the slow streams carry doubles.
public enum MotionSparkplug {
    /// The streams Sparkplug can carry, in catalog order (the agent's stream names).
    public static let streams = [
        "accelerometer", "gyroscope", "magnetometer", "device-motion", "pedometer", "activity", "altimeter",
        "submersion",
    ]

    /// The settings every stream device ends with, after its data metrics.
    public enum Config: Int, CaseIterable {
        case enabled
        case rateHz
        case effectiveRateHz

        public var definition: SparkplugMetricDefinition {
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
    public static func device(for stream: String) -> SparkplugDeviceDefinition? {
        guard let data = dataMetrics(of: stream) else { return nil }
        return SparkplugDeviceDefinition(id: stream, metrics: data + Config.allCases.map(\.definition))
    }

    /// Where a stream's settings start among its device's metrics.
    public static func configIndex(_ config: Config, stream: String) -> Int? {
        dataMetrics(of: stream).map { $0.count + config.rawValue }
    }

    /// The edge node's catalog for the streams the operator chose (`sparkplug.streams`), in `streams` order.
    public static func catalog(
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

    static func dataMetrics(of stream: String) -> [SparkplugMetricDefinition]? {
        switch stream {
        case "accelerometer":
            vector("acceleration", .float, "g", "acceleration, Core Motion's sign (face up at rest: z = −1)")
        case "gyroscope": vector("rotationRate", .float, "rad/s", "raw rotation rate, bias included")
        case "magnetometer": vector("magneticField", .float, "µT", "raw magnetic field, hard and soft iron included")
        case "device-motion": deviceMotion
        case "pedometer": pedometer
        case "activity": activity
        case "altimeter": altimeter
        case "submersion": submersion
        default: nil
        }
    }

    private static func vector(
        _ path: String,
        _ type: SparkplugDataType,
        _ unit: String,
        _ description: String
    ) -> [SparkplugMetricDefinition] {
        ["x", "y", "z"].map { SparkplugMetricDefinition("\(path)/\($0)", type, unit: unit, description: description) }
    }

    private static func quaternion(_ path: String, _ description: String) -> [SparkplugMetricDefinition] {
        ["x", "y", "z", "w"].map {
            SparkplugMetricDefinition("\(path)/quaternion/\($0)", .float, description: description)
        }
    }

    private static func euler(_ path: String) -> [SparkplugMetricDefinition] {
        [
            SparkplugMetricDefinition("\(path)/roll", .float, unit: "rad", description: "rotation about the y axis"),
            SparkplugMetricDefinition("\(path)/pitch", .float, unit: "rad", description: "rotation about the x axis"),
            SparkplugMetricDefinition("\(path)/yaw", .float, unit: "rad", description: "rotation about the vertical"),
        ]
    }

    /// `DeviceMotionMetric`'s order.
    static let deviceMotion: [SparkplugMetricDefinition] =
        quaternion("attitude", "attitude: device axes into the reference frame")
        + euler("attitude")
        + vector("rotationRate", .float, "rad/s", "rotation rate, estimated bias removed")
        + vector("gravity", .float, "g", "gravity in device axes")
        + vector("userAcceleration", .float, "g", "acceleration the user gives the device")
        + vector("magneticField/field", .float, "µT", "calibrated magnetic field")
        + [
            SparkplugMetricDefinition(
                "magneticField/accuracy",
                .string,
                description: "uncalibrated, low, medium or high"
            ),
            SparkplugMetricDefinition(
                "heading",
                .float,
                unit: "deg",
                description: "clockwise from north of the device's top edge; −1 without one"
            ),
            SparkplugMetricDefinition("inclinationAccuracy", .float, unit: "deg", description: "1-σ tilt error"),
            SparkplugMetricDefinition(
                "headingAccuracy",
                .float,
                unit: "deg",
                description: "1-σ heading error; −1 without a heading"
            ),
            SparkplugMetricDefinition("referenceFrame", .string, description: "Core Motion's attitude reference frame"),
        ]
        + quaternion("relativeAttitude", "attitude relative to the reference attitude; null without one")
        + euler("relativeAttitude")
        + [
            SparkplugMetricDefinition(
                "relativeAttitude/referenceTime",
                .dateTime,
                description: "when the reference attitude was set"
            )
        ]

    static let pedometer: [SparkplugMetricDefinition] = [
        SparkplugMetricDefinition("numberOfSteps", .int64, unit: "steps", description: "steps since the count began"),
        SparkplugMetricDefinition("distance", .double, unit: "m", description: "distance walked; null without"),
        SparkplugMetricDefinition("floorsAscended", .int64, unit: "floors", description: "null without a barometer"),
        SparkplugMetricDefinition("floorsDescended", .int64, unit: "floors", description: "null without a barometer"),
        SparkplugMetricDefinition("currentPace", .double, unit: "s/m", description: "null while not walking"),
        SparkplugMetricDefinition("currentCadence", .double, unit: "steps/s", description: "null while not walking"),
        SparkplugMetricDefinition("averageActivePace", .double, unit: "s/m", description: "null before walking"),
        SparkplugMetricDefinition("startDate", .dateTime, description: "when the count began"),
        SparkplugMetricDefinition("endDate", .dateTime, description: "the end of the counted period"),
        SparkplugMetricDefinition("events/type", .string, description: "the last pedometer event: pause or resume"),
        SparkplugMetricDefinition("events/date", .dateTime, description: "when walking stopped or started"),
    ]

    static let activity: [SparkplugMetricDefinition] =
        ["stationary", "walking", "running", "automotive", "cycling", "unknown"].map {
            SparkplugMetricDefinition($0, .boolean, description: "Core Motion's activity flag")
        } + [
            SparkplugMetricDefinition("confidence", .string, description: "low, medium or high"),
            SparkplugMetricDefinition("startDate", .dateTime, description: "when this activity began"),
        ]

    static let altimeter: [SparkplugMetricDefinition] = [
        SparkplugMetricDefinition("relativeAltitude", .double, unit: "m", description: "since the agent started"),
        SparkplugMetricDefinition("pressure", .double, unit: "kPa", description: "barometric pressure"),
        SparkplugMetricDefinition("absolute/altitude", .double, unit: "m", description: "above sea level"),
        SparkplugMetricDefinition(
            "absolute/accuracy",
            .double,
            unit: "m",
            description: "of the altitude above sea level"
        ),
        SparkplugMetricDefinition("absolute/precision", .double, unit: "m", description: "noise of the reading"),
    ]

    static let submersion: [SparkplugMetricDefinition] = [
        SparkplugMetricDefinition(
            "state",
            .string,
            description: "notSubmerged, submergedShallow, submergedDeep, approachingMaxDepth or pastMaxDepth"
        ),
        SparkplugMetricDefinition("depth", .double, unit: "m", description: "below the tracked surface"),
        SparkplugMetricDefinition("pressure", .double, unit: "kPa", description: "water pressure"),
        SparkplugMetricDefinition("surfacePressure", .double, unit: "kPa", description: "pressure at the surface"),
        SparkplugMetricDefinition("temperature", .double, unit: "°C", description: "water temperature; null without"),
    ]

    /// Milliseconds since the Unix epoch from Unix seconds (the agent's `time`).
    @inline(__always)
    public static func milliseconds(_ unixSeconds: Double) -> UInt64 {
        unixSeconds > 0 ? UInt64((unixSeconds * 1000).rounded()) : 0
    }
}
