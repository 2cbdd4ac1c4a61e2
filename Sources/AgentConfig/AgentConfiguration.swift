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
package struct AgentConfiguration: Sendable, Equatable {
    package var device = DeviceSettings()
    package var location = LocationSettings()
    package var agent = AgentSettings()
    package var source = SourceSettings()
    package var mqtt = MQTTSettings()
    package var topics = TopicSettings()
    package var control = ControlSettings()
    package var outbox = OutboxSettings()
    /// One entry per stream name; a stream missing from the file keeps its defaults.
    package var streams: [StreamName: StreamSettings] = StreamName.defaultSettings
    /// Settings only device motion has (`streams.device-motion.reference_frame`).
    package var deviceMotion = DeviceMotionSettings()
    /// Settings only the events stream has (`streams.events.falls`, `impact_threshold_g`, …).
    package var events = MotionEventsSettings()
    package var pedometer = PedometerSettings()
    package var altimeter = AltimeterSettings()
    package var submersion = SubmersionSettings()
    package var metrics = MetricsSettings()
    package var homeAssistant = HomeAssistantSettings()
    package var sparkplug = SparkplugSettings()

    package init() {}
}

package struct DeviceSettings: Sendable, Equatable {
    /// `{device}` in topic templates. Default: the host name. Allowed: 1–64 characters, no `/ + #`.
    package var id: String = DeviceSettings.hostName()

    package init() {}

    package static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "motion-agent" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "motion-agent" : name
    }
}

package enum LogLevelSetting: String, Sendable, Equatable, CaseIterable, Codable {
    case trace, debug, info, notice, warning, error, critical
}

/// Where the device is, for the World Magnetic Model: the declination that turns magnetic north into true
/// north, and the field strength and inclination a calibrated magnetometer should read. Unset by default:
/// a device does not know where it is installed.
package struct LocationSettings: Sendable, Equatable {
    /// Degrees north, −90…90. Set together with `longitude`, or neither.
    package var latitude: Double? = nil
    /// Degrees east, −180…180.
    package var longitude: Double? = nil
    /// Metres above the WGS 84 ellipsoid, −1000…10000; used only when a location is configured.
    package var altitudeM: Double = 0

    package init() {}

    /// Latitude and longitude are both set (the loader refuses one without the other).
    package var isConfigured: Bool { latitude != nil && longitude != nil }
}

package struct AgentSettings: Sendable, Equatable {
    /// Where persistent state lives (calibration, outbox, history). `nil`: /var/lib/motion-agent when
    /// writable, else ./.motion-agent (resolved by `resolvedStateDirectory()`).
    package var stateDir: String? = nil
    package var logLevel: LogLevelSetting = .info

    package init() {}
}

package enum SourceKind: String, Sendable, Equatable, CaseIterable, Codable {
    /// IIO when an IMU is found, otherwise the simulator; the log says which.
    case auto
    case iio
    case simulated
    case replay
}

package struct SourceSettings: Sendable, Equatable {
    package var kind: SourceKind = .auto
    package var simulated = SimulatedSourceSettings()
    package var iio = IIOSourceSettings()
    package var replay = ReplaySourceSettings()

    package init() {}
}

package struct SimulatedSourceSettings: Sendable, Equatable {
    /// One of the simulator's scenarios: stationary, walking, running, stairs-up, stairs-down, rotating,
    /// cycling, driving, mixed-day.
    package var scenario: String = "walking"
    package var seed: UInt64 = 1
    /// The simulated hardware's top rate, Hz (1–4000). It supports this rate and its halvings down to
    /// about 1 Hz, like a real ODR ladder; streams asking for more are clamped to it.
    package var rateHz: Double = 200
    /// Where the simulated device is, for the Earth field it senses (degrees, metres).
    package var latitude: Double = 48.2
    package var longitude: Double = 16.37
    package var altitudeM: Double = 200

    package init() {}
}

package struct IIOSourceSettings: Sendable, Equatable {
    /// libiio context URI: `local:`, `ip:HOST`, `usb:`, `serial:`.
    package var uri: String = "local:"
    /// The IIO devices this agent uses, by id (`iio:device2`) or driver name (`ak8975`); empty: every device
    /// found. Several IMUs on one host run one agent each, each selecting its own devices here.
    package var devices: [String] = []
    /// Mount-matrix overrides as written in config.yaml, `DEVICE[:SENSOR]=x0, y0, z0; x1, y1, z1; x2, y2, z2`,
    /// already checked at load; `mountMatrixOverrides` gives them parsed.
    package var mountMatrix: [String] = []

    package init() {}
}

package enum ReplaySpeed: String, Sendable, Equatable, CaseIterable, Codable {
    /// At the recorded rate, as the hardware delivered it.
    case realtime
    /// As fast as the pipeline takes it.
    case fast
}

package struct ReplaySourceSettings: Sendable, Equatable {
    /// A recording in the record/replay CSV format. Required when `source.kind` is `replay`.
    package var file: String? = nil
    package var speed: ReplaySpeed = .realtime
    /// Start over at the end instead of stopping.
    package var loop: Bool = false

    package init() {}
}

package struct MQTTSettings: Sendable, Equatable {
    package var host: String = "127.0.0.1"
    package var port: Int = 1883
    /// Default `motion-agent-{device}`; `{device}` is replaced.
    package var clientID: String = "motion-agent-{device}"
    package var protocolVersion: MQTTProtocolSetting = .v5
    /// Seconds, 5–65535.
    package var keepalive: Int = 30
    /// Keep the broker session (subscriptions, queued QoS > 0 messages) across reconnects.
    package var cleanSession: Bool = true
    package var username: String? = nil
    /// A file holding the password (first line). Never put the password itself in config.yaml.
    package var passwordFile: String? = nil
    package var tls: TLSSettings? = nil
    /// Reconnect back-off: first delay and cap, seconds; each wait is jittered.
    package var reconnectMinDelay: Double = 0.5
    package var reconnectMaxDelay: Double = 30
    /// QoS > 0 messages in flight at once, 1–65535.
    package var maxInflight: Int = 100
    /// Several brokers of one cluster (or bridged brokers), `host:port` each (`host` alone takes `port`);
    /// empty: the one server `host`/`port`. The agent starts at a random entry and fails over to the next.
    package var servers: [String] = []
    /// MQTT 5 Session Expiry Interval of a persistent session (`cleanSession` false), seconds; 0: never expires.
    package var sessionExpirySeconds: Int = 0
    /// How each reconnect wait is drawn from the back-off window.
    package var reconnectJitter: ReconnectJitterSetting = .full

    package init() {}

    /// The brokers to connect to, in failover order: `servers`, or the one `host`/`port`.
    package var endpoints: [MQTTEndpoint] {
        let listed = servers.compactMap { MQTTEndpoint(parsing: $0, defaultPort: port) }
        return listed.isEmpty ? [MQTTEndpoint(host: host, port: port)] : listed
    }
}

package enum ReconnectJitterSetting: String, Sendable, Equatable, CaseIterable, Codable {
    /// Anywhere in [0, window]: a fleet's reconnects spread over the whole window.
    case full
    /// In [½·window, window], what the agent did before full jitter: kept to measure the difference.
    case equal
}

package enum MQTTProtocolSetting: String, Sendable, Equatable, CaseIterable, Codable {
    case v5
    case v311
    /// MQTT 5 first; MQTT 3.1.1 with a broker that refuses 5 (RabbitMQ 3.x).
    case auto
}

package struct TLSSettings: Sendable, Equatable {
    package var caFile: String? = nil
    package var certFile: String? = nil
    package var keyFile: String? = nil

    package init() {}
}

package struct TopicSettings: Sendable, Equatable {
    /// Every topic is under this root; `{device}` is replaced by `device.id`.
    package var root: String = "motion/{device}"

    package init() {}
}

/// The control plane: which topics the agent takes commands from besides `{root}/control`, and the limits
/// that keep bad, stale, replayed or unauthorized commands from changing the device.
package struct ControlSettings: Sendable, Equatable {
    /// Commands for every device of the fleet; a topic without wildcards.
    package var fleetTopic: String = TopicScheme.fleetControl
    /// The fleet layer's retained desired-state document; a topic without wildcards.
    package var fleetDesiredTopic: String = TopicScheme.fleetDesired
    /// Group names, each one topic level; the agent also subscribes `motion/group/<name>/control`.
    package var groups: [String] = []
    /// Changes made by commands are saved in the state directory and survive restarts.
    package var persist: Bool = true
    /// Commands older than this are refused when the clock is synchronized, seconds (0…86400); 0 accepts
    /// any age.
    package var maxAgeSeconds: Int = 300
    /// Token bucket for commands: refill rate, commands per second (> 0, ≤ 1000), and bucket size (1…10000).
    package var rateLimitPerSecond: Double = 10
    package var rateLimitBurst: Int = 20
    /// The operators' Ed25519 public keys (`TrustedKeyFile`); when set, every command and desired document must
    /// be signed by one of them, for its own topic. Read with `readTrustedKeys()`.
    package var trustedKeysFile: String? = nil
    /// Larger command payloads are refused unparsed, bytes (256…65536).
    package var maxPayloadBytes: Int = 8192

    package init() {}

    /// `maxAgeSeconds` as a duration; `nil` when the age check is off (0).
    package var maxAge: Duration? { maxAgeSeconds == 0 ? nil : .seconds(maxAgeSeconds) }
}

/// Bounds of the outbox between the streams and the MQTT client; past either, the oldest messages are
/// dropped (and counted).
package struct OutboxSettings: Sendable, Equatable {
    /// Bytes (65536…1073741824); default 8 MiB.
    package var maxBytes: Int = 8_388_608
    /// Seconds (1…604800, a week); default one hour.
    package var maxAgeSeconds: Int = 3600
    /// Messages per second (1…100000) when a backlog of durable messages drains after an outage or a
    /// restart, so a fleet coming back together does not flood the broker; default 500. Must exceed the
    /// live rate of the durable streams, or the backlog never drains.
    package var replayRate: Int = 500

    package init() {}

    package var maxAge: Duration { .seconds(maxAgeSeconds) }
}

package struct PedometerSettings: Sendable, Equatable {
    /// The user's height, metres (0.5…2.5); stride length, and so distance, derives from it.
    package var userHeightM: Double = 1.75
    /// How long step counts and activity segments are kept for history queries, days (1…365).
    package var historyRetentionDays: Int = 7

    package init() {}
}

package struct AltimeterSettings: Sendable, Equatable {
    /// The sea-level pressure for absolute altitude, kPa (80…110); 101.325 is the ICAO standard atmosphere.
    package var seaLevelPressureKPa: Double = 101.325

    package init() {}
}

/// The water the device dives in: its density turns pressure into depth.
package enum WaterKind: String, Sendable, Equatable, CaseIterable, Codable {
    case fresh
    case salt

    /// kg/m³: fresh water at 25 °C is 997.0 (CRC Handbook); 1025 is the usual mean density of surface
    /// sea water, as dive computers use for their salt-water setting.
    package var densityKgPerM3: Double {
        switch self {
        case .fresh: 997
        case .salt: 1025
        }
    }
}

package struct SubmersionSettings: Sendable, Equatable {
    package var water: WaterKind = .fresh
    /// The depth the device is rated for, metres (1…1000); states approachingMaxDepth and pastMaxDepth
    /// refer to it.
    package var maxDepthM: Double = 40

    package init() {}
}

package struct DeviceMotionSettings: Sendable, Equatable {
    /// The attitude's reference frame, Core Motion's `CMAttitudeReferenceFrame`. Frames other than
    /// xArbitraryZVertical need a magnetometer; xTrueNorthZVertical also needs `location`.
    package var referenceFrame: AttitudeReferenceFrame = .xArbitraryZVertical
    /// The attitude `relativeAttitude` is relative to (Core Motion's `multiply(byInverseOf:)`), normalised;
    /// nil: none, and device motion publishes only the absolute attitude. Set by config.yaml, a desired
    /// document or `set-reference-attitude`.
    package var referenceAttitude: Quaternion? = nil

    package init() {}
}
