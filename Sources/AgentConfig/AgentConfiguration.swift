import AgentPorts
import MotionModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The mirror of config.yaml, read by `ConfigurationLoader` (keys and ranges in `ConfigurationSchema`). Every
/// key, its default and its range are documented in the shipped config.yaml (the sample is the
/// documentation; a test decodes it so the two cannot drift).
///
/// Field names are Swift-cased; the YAML keys are snake_case (`rate_hz`, `state_dir`, `password_file`).
/// Extend, don't rename: other issues and users rely on these keys.
public struct AgentConfiguration: Sendable, Equatable {
    public var device = DeviceSettings()
    public var location = LocationSettings()
    public var agent = AgentSettings()
    public var source = SourceSettings()
    public var mqtt = MQTTSettings()
    public var topics = TopicSettings()
    public var control = ControlSettings()
    public var outbox = OutboxSettings()
    /// One entry per stream name; a stream missing from the file keeps its defaults.
    public var streams: [StreamName: StreamSettings] = StreamName.defaultSettings
    /// Settings only device motion has (`streams.device-motion.reference_frame`).
    public var deviceMotion = DeviceMotionSettings()
    /// Settings only the events stream has (`streams.events.falls`, `impact_threshold_g`, …).
    public var events = MotionEventsSettings()
    public var pedometer = PedometerSettings()
    public var altimeter = AltimeterSettings()
    public var submersion = SubmersionSettings()
    public var metrics = MetricsSettings()
    public var homeAssistant = HomeAssistantSettings()
    public var sparkplug = SparkplugSettings()

    public init() {}
}

public struct DeviceSettings: Sendable, Equatable {
    /// `{device}` in topic templates. Default: the host name. Allowed: 1–64 characters, no `/ + #`.
    public var id: String = DeviceSettings.hostName()

    public init() {}

    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "motion-agent" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "motion-agent" : name
    }
}

public enum LogLevelSetting: String, Sendable, Equatable, CaseIterable, Codable {
    case trace, debug, info, notice, warning, error, critical
}

/// Where the device is, for the World Magnetic Model: the declination that turns magnetic north into true
/// north, and the field strength and inclination a calibrated magnetometer should read. Unset by default:
/// a device does not know where it is installed.
public struct LocationSettings: Sendable, Equatable {
    /// Degrees north, −90…90. Set together with `longitude`, or neither.
    public var latitude: Double? = nil
    /// Degrees east, −180…180.
    public var longitude: Double? = nil
    /// Metres above the WGS 84 ellipsoid, −1000…10000; used only when a location is configured.
    public var altitudeM: Double = 0

    public init() {}

    /// Latitude and longitude are both set (the loader refuses one without the other).
    public var isConfigured: Bool { latitude != nil && longitude != nil }
}

public struct AgentSettings: Sendable, Equatable {
    /// Where persistent state lives (calibration, outbox, history). `nil`: /var/lib/motion-agent when
    /// writable, else ./.motion-agent (resolved by `resolvedStateDirectory()`).
    public var stateDir: String? = nil
    public var logLevel: LogLevelSetting = .info

    public init() {}
}

public enum SourceKind: String, Sendable, Equatable, CaseIterable, Codable {
    /// IIO when an IMU is found, otherwise the simulator; the log says which.
    case auto
    case iio
    case simulated
    case replay
}

public struct SourceSettings: Sendable, Equatable {
    public var kind: SourceKind = .auto
    public var simulated = SimulatedSourceSettings()
    public var iio = IIOSourceSettings()
    public var replay = ReplaySourceSettings()

    public init() {}
}

public struct SimulatedSourceSettings: Sendable, Equatable {
    /// One of the simulator's scenarios: stationary, walking, running, stairs-up, stairs-down, rotating,
    /// cycling, driving, mixed-day.
    public var scenario: String = "walking"
    public var seed: UInt64 = 1
    /// The simulated hardware's top rate, Hz (1–4000). It supports this rate and its halvings down to
    /// about 1 Hz, like a real ODR ladder; streams asking for more are clamped to it.
    public var rateHz: Double = 200
    /// Where the simulated device is, for the Earth field it senses (degrees, metres).
    public var latitude: Double = 48.2
    public var longitude: Double = 16.37
    public var altitudeM: Double = 200

    public init() {}
}

public struct IIOSourceSettings: Sendable, Equatable {
    /// libiio context URI: `local:`, `ip:HOST`, `usb:`, `serial:`.
    public var uri: String = "local:"
    /// The IIO devices this agent uses, by id (`iio:device2`) or driver name (`ak8975`); empty: every device
    /// found. Several IMUs on one host run one agent each, each selecting its own devices here.
    public var devices: [String] = []
    /// Mount-matrix overrides as written in config.yaml, `DEVICE[:SENSOR]=x0, y0, z0; x1, y1, z1; x2, y2, z2`,
    /// already checked at load; `mountMatrixOverrides` gives them parsed.
    public var mountMatrix: [String] = []

    public init() {}
}

public enum ReplaySpeed: String, Sendable, Equatable, CaseIterable, Codable {
    /// At the recorded rate, as the hardware delivered it.
    case realtime
    /// As fast as the pipeline takes it.
    case fast
}

public struct ReplaySourceSettings: Sendable, Equatable {
    /// A recording in the record/replay CSV format. Required when `source.kind` is `replay`.
    public var file: String? = nil
    public var speed: ReplaySpeed = .realtime
    /// Start over at the end instead of stopping.
    public var loop: Bool = false

    public init() {}
}

public struct MQTTSettings: Sendable, Equatable {
    public var host: String = "127.0.0.1"
    public var port: Int = 1883
    /// Default `motion-agent-{device}`; `{device}` is replaced.
    public var clientID: String = "motion-agent-{device}"
    public var protocolVersion: MQTTProtocolSetting = .v5
    /// Seconds, 5–65535.
    public var keepalive: Int = 30
    /// Keep the broker session (subscriptions, queued QoS > 0 messages) across reconnects.
    public var cleanSession: Bool = true
    public var username: String? = nil
    /// A file holding the password (first line). Never put the password itself in config.yaml.
    public var passwordFile: String? = nil
    public var tls: TLSSettings? = nil
    /// Reconnect back-off: first delay and cap, seconds; each wait is jittered.
    public var reconnectMinDelay: Double = 0.5
    public var reconnectMaxDelay: Double = 30
    /// QoS > 0 messages in flight at once, 1–65535.
    public var maxInflight: Int = 100
    /// Several brokers of one cluster (or bridged brokers), `host:port` each (`host` alone takes `port`);
    /// empty: the one server `host`/`port`. The agent starts at a random entry and fails over to the next.
    public var servers: [String] = []
    /// MQTT 5 Session Expiry Interval of a persistent session (`cleanSession` false), seconds; 0: never expires.
    public var sessionExpirySeconds: Int = 0
    /// How each reconnect wait is drawn from the back-off window.
    public var reconnectJitter: ReconnectJitterSetting = .full

    public init() {}

    /// The brokers to connect to, in failover order: `servers`, or the one `host`/`port`.
    public var endpoints: [MQTTEndpoint] {
        let listed = servers.compactMap { MQTTEndpoint(parsing: $0, defaultPort: port) }
        return listed.isEmpty ? [MQTTEndpoint(host: host, port: port)] : listed
    }
}

public enum ReconnectJitterSetting: String, Sendable, Equatable, CaseIterable, Codable {
    /// Anywhere in [0, window]: a fleet's reconnects spread over the whole window.
    case full
    /// In [½·window, window], what the agent did before full jitter: kept to measure the difference.
    case equal
}

public enum MQTTProtocolSetting: String, Sendable, Equatable, CaseIterable, Codable {
    case v5
    case v311
    /// MQTT 5 first; MQTT 3.1.1 with a broker that refuses 5 (RabbitMQ 3.x).
    case auto
}

public struct TLSSettings: Sendable, Equatable {
    public var caFile: String? = nil
    public var certFile: String? = nil
    public var keyFile: String? = nil

    public init() {}
}

public struct TopicSettings: Sendable, Equatable {
    /// Every topic is under this root; `{device}` is replaced by `device.id`.
    public var root: String = "motion/{device}"

    public init() {}
}

/// The control plane: which topics the agent takes commands from besides `{root}/control`, and the limits
/// that keep bad, stale, replayed or unauthorized commands from changing the device.
public struct ControlSettings: Sendable, Equatable {
    /// Commands for every device of the fleet; a topic without wildcards.
    public var fleetTopic: String = TopicScheme.fleetControl
    /// The fleet layer's retained desired-state document; a topic without wildcards.
    public var fleetDesiredTopic: String = TopicScheme.fleetDesired
    /// Group names, each one topic level; the agent also subscribes `motion/group/<name>/control`.
    public var groups: [String] = []
    /// Changes made by commands are saved in the state directory and survive restarts.
    public var persist: Bool = true
    /// Commands older than this are refused when the clock is synchronized, seconds (0…86400); 0 accepts
    /// any age.
    public var maxAgeSeconds: Int = 300
    /// Token bucket for commands: refill rate, commands per second (> 0, ≤ 1000), and bucket size (1…10000).
    public var rateLimitPerSecond: Double = 10
    public var rateLimitBurst: Int = 20
    /// The operators' Ed25519 public keys (`TrustedKeyFile`); when set, every command and desired document must
    /// be signed by one of them, for its own topic. Read with `readTrustedKeys()`.
    public var trustedKeysFile: String? = nil
    /// Larger command payloads are refused unparsed, bytes (256…65536).
    public var maxPayloadBytes: Int = 8192

    public init() {}

    /// `maxAgeSeconds` as a duration; `nil` when the age check is off (0).
    public var maxAge: Duration? { maxAgeSeconds == 0 ? nil : .seconds(maxAgeSeconds) }
}

/// Bounds of the outbox between the streams and the MQTT client; past either, the oldest messages are
/// dropped (and counted).
public struct OutboxSettings: Sendable, Equatable {
    /// Bytes (65536…1073741824); default 8 MiB.
    public var maxBytes: Int = 8_388_608
    /// Seconds (1…604800, a week); default one hour.
    public var maxAgeSeconds: Int = 3600
    /// Messages per second (1…100000) when a backlog of durable messages drains after an outage or a
    /// restart, so a fleet coming back together does not flood the broker; default 500. Must exceed the
    /// live rate of the durable streams, or the backlog never drains.
    public var replayRate: Int = 500

    public init() {}

    public var maxAge: Duration { .seconds(maxAgeSeconds) }
}

public struct PedometerSettings: Sendable, Equatable {
    /// The user's height, metres (0.5…2.5); stride length, and so distance, derives from it.
    public var userHeightM: Double = 1.75
    /// How long step counts and activity segments are kept for history queries, days (1…365).
    public var historyRetentionDays: Int = 7

    public init() {}
}

public struct AltimeterSettings: Sendable, Equatable {
    /// The sea-level pressure for absolute altitude, kPa (80…110); 101.325 is the ICAO standard atmosphere.
    public var seaLevelPressureKPa: Double = 101.325

    public init() {}
}

/// The water the device dives in: its density turns pressure into depth.
public enum WaterKind: String, Sendable, Equatable, CaseIterable, Codable {
    case fresh
    case salt

    /// kg/m³: fresh water at 25 °C is 997.0 (CRC Handbook); 1025 is the usual mean density of surface
    /// sea water, as dive computers use for their salt-water setting.
    public var densityKgPerM3: Double {
        switch self {
        case .fresh: 997
        case .salt: 1025
        }
    }
}

public struct SubmersionSettings: Sendable, Equatable {
    public var water: WaterKind = .fresh
    /// The depth the device is rated for, metres (1…1000); states approachingMaxDepth and pastMaxDepth
    /// refer to it.
    public var maxDepthM: Double = 40

    public init() {}
}

public struct DeviceMotionSettings: Sendable, Equatable {
    /// The attitude's reference frame, Core Motion's `CMAttitudeReferenceFrame`. Frames other than
    /// xArbitraryZVertical need a magnetometer; xTrueNorthZVertical also needs `location`.
    public var referenceFrame: AttitudeReferenceFrame = .xArbitraryZVertical
    /// The attitude `relativeAttitude` is relative to (Core Motion's `multiply(byInverseOf:)`), normalised;
    /// nil: none, and device motion publishes only the absolute attitude. Set by config.yaml, a desired
    /// document or `set-reference-attitude`.
    public var referenceAttitude: Quaternion? = nil

    public init() {}
}
