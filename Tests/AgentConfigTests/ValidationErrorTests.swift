import Testing

@testable import AgentConfig

/// One invalid file and the one problem it must report.
struct InvalidCase: Sendable, CustomTestStringConvertible {
    var yaml: String
    var keyPath: String
    var value: String?
    var line: Int
    var kind: ConfigurationError.Kind
    var suggestion: String? = nil

    var testDescription: String { "\(keyPath) = \(value ?? "nil") (\(kind))" }
}

/// Decodes `yaml`, which must fail, and returns the error.
func decodingError(_ yaml: String, environment: [String: String] = [:]) -> ConfigurationError? {
    do {
        _ = try ConfigurationLoader.decode(yaml: yaml, source: "config.yaml", environment: environment)
        return nil
    } catch {
        return error
    }
}

@Suite struct ValidationErrorTests {
    static let unknownKeys: [InvalidCase] = [
        InvalidCase(
            yaml: "mqt:\n  host: x\n",
            keyPath: "mqt",
            value: "mqt",
            line: 1,
            kind: .unknownKey,
            suggestion: "mqtt"
        ),
        InvalidCase(
            yaml: "streams:\n  accelerometer:\n    rate: 10\n",
            keyPath: "streams.accelerometer.rate",
            value: "rate",
            line: 3,
            kind: .unknownKey,
            suggestion: "rate_hz"
        ),
        InvalidCase(
            yaml: "mqtt:\n  keep_alive: 10\n",
            keyPath: "mqtt.keep_alive",
            value: "keep_alive",
            line: 2,
            kind: .unknownKey,
            suggestion: "keepalive"
        ),
        InvalidCase(
            yaml: "streams:\n  gyroscope:\n    qso: 1\n",
            keyPath: "streams.gyroscope.qso",
            value: "qso",
            line: 3,
            kind: .unknownKey,
            suggestion: "qos"
        ),
        InvalidCase(
            yaml: "source:\n  kind: iio\n  host: broker\n",
            keyPath: "source.host",
            value: "host",
            line: 3,
            kind: .unknownKey,
            suggestion: "mqtt.host"
        ),
        InvalidCase(
            yaml: "streams:\n  acelerometer:\n    enabled: true\n",
            keyPath: "streams.acelerometer",
            value: "acelerometer",
            line: 2,
            kind: .unknownKey,
            suggestion: "accelerometer"
        ),
        InvalidCase(
            yaml: "streams:\n  compass:\n    enabled: true\n",
            keyPath: "streams.compass",
            value: "compass",
            line: 2,
            kind: .unknownKey
        ),
        InvalidCase(
            yaml: "mqtt:\n  tls:\n    ca: /x\n",
            keyPath: "mqtt.tls.ca",
            value: "ca",
            line: 3,
            kind: .unknownKey,
            suggestion: "ca_file"
        ),
        InvalidCase(
            yaml: "location:\n  lat: 48.2\n  longitude: 16.4\n",
            keyPath: "location.lat",
            value: "lat",
            line: 2,
            kind: .unknownKey,
            suggestion: "latitude"
        ),
        InvalidCase(
            yaml: "control:\n  group: [a]\n",
            keyPath: "control.group",
            value: "group",
            line: 2,
            kind: .unknownKey,
            suggestion: "groups"
        ),
        InvalidCase(
            yaml: "outbox:\n  max_age: 60\n",
            keyPath: "outbox.max_age",
            value: "max_age",
            line: 2,
            kind: .unknownKey,
            suggestion: "max_age_s"
        ),
        InvalidCase(
            yaml: "control:\n  max_bytes: 1024\n",
            keyPath: "control.max_bytes",
            value: "max_bytes",
            line: 2,
            kind: .unknownKey,
            suggestion: "outbox.max_bytes"
        ),
        InvalidCase(
            yaml: "pedometer:\n  user_height: 1.8\n",
            keyPath: "pedometer.user_height",
            value: "user_height",
            line: 2,
            kind: .unknownKey,
            suggestion: "user_height_m"
        ),
        InvalidCase(
            yaml: "altimeter:\n  sea_level_pressure: 101\n",
            keyPath: "altimeter.sea_level_pressure",
            value: "sea_level_pressure",
            line: 2,
            kind: .unknownKey,
            suggestion: "sea_level_pressure_kpa"
        ),
        InvalidCase(
            yaml: "submersion:\n  density: 1025\n",
            keyPath: "submersion.density",
            value: "density",
            line: 2,
            kind: .unknownKey
        ),
    ]

    static let wrongTypes: [InvalidCase] = [
        InvalidCase(yaml: "mqtt:\n  port: abc\n", keyPath: "mqtt.port", value: "abc", line: 2, kind: .wrongType),
        InvalidCase(yaml: "mqtt:\n  port: 1883.5\n", keyPath: "mqtt.port", value: "1883.5", line: 2, kind: .wrongType),
        InvalidCase(yaml: "mqtt:\n  port:\n    a: 1\n", keyPath: "mqtt.port", value: nil, line: 3, kind: .wrongType),
        InvalidCase(yaml: "mqtt:\n  host: [a, b]\n", keyPath: "mqtt.host", value: nil, line: 2, kind: .wrongType),
        InvalidCase(yaml: "mqtt: broker.local\n", keyPath: "mqtt", value: "broker.local", line: 1, kind: .wrongType),
        InvalidCase(yaml: "just text\n", keyPath: "", value: "just text", line: 1, kind: .wrongType),
        InvalidCase(yaml: "- a\n- b\n", keyPath: "", value: nil, line: 1, kind: .wrongType),
        InvalidCase(
            yaml: "source:\n  replay:\n    loop: maybe\n",
            keyPath: "source.replay.loop",
            value: "maybe",
            line: 3,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "streams:\n  magnetometer:\n    qos: 1.5\n",
            keyPath: "streams.magnetometer.qos",
            value: "1.5",
            line: 3,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "streams:\n  magnetometer:\n    rate_hz: fast\n",
            keyPath: "streams.magnetometer.rate_hz",
            value: "fast",
            line: 3,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "source:\n  simulated:\n    seed: 1.5\n",
            keyPath: "source.simulated.seed",
            value: "1.5",
            line: 3,
            kind: .wrongType
        ),
        InvalidCase(yaml: "streams: [accelerometer]\n", keyPath: "streams", value: nil, line: 1, kind: .wrongType),
        InvalidCase(
            yaml: "location:\n  latitude: north\n  longitude: 16.4\n",
            keyPath: "location.latitude",
            value: "north",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "location:\n  latitude: 48.2\n  longitude: [16, 22]\n",
            keyPath: "location.longitude",
            value: nil,
            line: 3,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "location:\n  altitude_m: high\n",
            keyPath: "location.altitude_m",
            value: "high",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "control:\n  persist: sometimes\n",
            keyPath: "control.persist",
            value: "sometimes",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "control:\n  max_age_s: 1.5\n",
            keyPath: "control.max_age_s",
            value: "1.5",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "control:\n  rate_limit_per_s: many\n",
            keyPath: "control.rate_limit_per_s",
            value: "many",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "control:\n  rate_limit_burst: 2.5\n",
            keyPath: "control.rate_limit_burst",
            value: "2.5",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "control:\n  max_payload_bytes: 8k\n",
            keyPath: "control.max_payload_bytes",
            value: "8k",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "control:\n  fleet_topic:\n    name: x\n",
            keyPath: "control.fleet_topic",
            value: nil,
            line: 3,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "outbox:\n  max_bytes: 8MiB\n",
            keyPath: "outbox.max_bytes",
            value: "8MiB",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "outbox:\n  max_age_s: 1.5\n",
            keyPath: "outbox.max_age_s",
            value: "1.5",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "pedometer:\n  user_height_m: tall\n",
            keyPath: "pedometer.user_height_m",
            value: "tall",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "pedometer:\n  history_retention_days: 7.5\n",
            keyPath: "pedometer.history_retention_days",
            value: "7.5",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "altimeter:\n  sea_level_pressure_kpa: standard\n",
            keyPath: "altimeter.sea_level_pressure_kpa",
            value: "standard",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "submersion:\n  max_depth_m: deep\n",
            keyPath: "submersion.max_depth_m",
            value: "deep",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "pedometer: 1.75\n",
            keyPath: "pedometer",
            value: "1.75",
            line: 1,
            kind: .wrongType
        ),
    ]

    static let outOfRange: [InvalidCase] = [
        InvalidCase(
            yaml: "outbox:\n  replay_rate: 0\n",
            keyPath: "outbox.replay_rate",
            value: "0",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "streams:\n  accelerometer:\n    rate_hz: 5000\n",
            keyPath: "streams.accelerometer.rate_hz",
            value: "5000",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "streams:\n  accelerometer:\n    rate_hz: 0\n",
            keyPath: "streams.accelerometer.rate_hz",
            value: "0",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "streams:\n  gyroscope:\n    rate_hz: -1\n",
            keyPath: "streams.gyroscope.rate_hz",
            value: "-1",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "streams:\n  gyroscope:\n    rate_hz: .nan\n",
            keyPath: "streams.gyroscope.rate_hz",
            value: ".nan",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "streams:\n  gyroscope:\n    rate_hz: .inf\n",
            keyPath: "streams.gyroscope.rate_hz",
            value: ".inf",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "streams:\n  magnetometer:\n    qos: 3\n",
            keyPath: "streams.magnetometer.qos",
            value: "3",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "streams:\n  magnetometer:\n    qos: -1\n",
            keyPath: "streams.magnetometer.qos",
            value: "-1",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "source:\n  simulated:\n    rate_hz: 0.5\n",
            keyPath: "source.simulated.rate_hz",
            value: "0.5",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "source:\n  simulated:\n    rate_hz: 4001\n",
            keyPath: "source.simulated.rate_hz",
            value: "4001",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "source:\n  simulated:\n    seed: -1\n",
            keyPath: "source.simulated.seed",
            value: "-1",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "source:\n  simulated:\n    latitude: 91\n",
            keyPath: "source.simulated.latitude",
            value: "91",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "source:\n  simulated:\n    longitude: -180.5\n",
            keyPath: "source.simulated.longitude",
            value: "-180.5",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "source:\n  simulated:\n    altitude_m: -2000\n",
            keyPath: "source.simulated.altitude_m",
            value: "-2000",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(yaml: "mqtt:\n  port: 0\n", keyPath: "mqtt.port", value: "0", line: 2, kind: .outOfRange),
        InvalidCase(yaml: "mqtt:\n  port: 65536\n", keyPath: "mqtt.port", value: "65536", line: 2, kind: .outOfRange),
        InvalidCase(
            yaml: "mqtt:\n  port: 99999999999999999999\n",
            keyPath: "mqtt.port",
            value: "99999999999999999999",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(yaml: "mqtt:\n  keepalive: 4\n", keyPath: "mqtt.keepalive", value: "4", line: 2, kind: .outOfRange),
        InvalidCase(
            yaml: "mqtt:\n  keepalive: 65536\n",
            keyPath: "mqtt.keepalive",
            value: "65536",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "mqtt:\n  max_inflight: 0\n",
            keyPath: "mqtt.max_inflight",
            value: "0",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "mqtt:\n  reconnect_min_delay: 0\n",
            keyPath: "mqtt.reconnect_min_delay",
            value: "0",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "mqtt:\n  reconnect_max_delay: 7200\n",
            keyPath: "mqtt.reconnect_max_delay",
            value: "7200",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "location:\n  latitude: 90.5\n  longitude: 0\n",
            keyPath: "location.latitude",
            value: "90.5",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "location:\n  latitude: -91\n  longitude: 0\n",
            keyPath: "location.latitude",
            value: "-91",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "location:\n  latitude: 0\n  longitude: 180.01\n",
            keyPath: "location.longitude",
            value: "180.01",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "location:\n  latitude: 0\n  longitude: .nan\n",
            keyPath: "location.longitude",
            value: ".nan",
            line: 3,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "location:\n  altitude_m: 10001\n",
            keyPath: "location.altitude_m",
            value: "10001",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "location:\n  altitude_m: -1001\n",
            keyPath: "location.altitude_m",
            value: "-1001",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "control:\n  max_age_s: -1\n",
            keyPath: "control.max_age_s",
            value: "-1",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "control:\n  max_age_s: 86401\n",
            keyPath: "control.max_age_s",
            value: "86401",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "control:\n  rate_limit_per_s: 0\n",
            keyPath: "control.rate_limit_per_s",
            value: "0",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "control:\n  rate_limit_per_s: 1000.5\n",
            keyPath: "control.rate_limit_per_s",
            value: "1000.5",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "control:\n  rate_limit_burst: 0\n",
            keyPath: "control.rate_limit_burst",
            value: "0",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "control:\n  rate_limit_burst: 10001\n",
            keyPath: "control.rate_limit_burst",
            value: "10001",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "control:\n  max_payload_bytes: 255\n",
            keyPath: "control.max_payload_bytes",
            value: "255",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "control:\n  max_payload_bytes: 65537\n",
            keyPath: "control.max_payload_bytes",
            value: "65537",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "outbox:\n  max_bytes: 65535\n",
            keyPath: "outbox.max_bytes",
            value: "65535",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "outbox:\n  max_bytes: 1073741825\n",
            keyPath: "outbox.max_bytes",
            value: "1073741825",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "outbox:\n  max_age_s: 0\n",
            keyPath: "outbox.max_age_s",
            value: "0",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "outbox:\n  max_age_s: 604801\n",
            keyPath: "outbox.max_age_s",
            value: "604801",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "pedometer:\n  user_height_m: 0.49\n",
            keyPath: "pedometer.user_height_m",
            value: "0.49",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "pedometer:\n  user_height_m: 175\n",
            keyPath: "pedometer.user_height_m",
            value: "175",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "pedometer:\n  history_retention_days: 0\n",
            keyPath: "pedometer.history_retention_days",
            value: "0",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "pedometer:\n  history_retention_days: 366\n",
            keyPath: "pedometer.history_retention_days",
            value: "366",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "altimeter:\n  sea_level_pressure_kpa: 1013.25\n",
            keyPath: "altimeter.sea_level_pressure_kpa",
            value: "1013.25",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "altimeter:\n  sea_level_pressure_kpa: 79.9\n",
            keyPath: "altimeter.sea_level_pressure_kpa",
            value: "79.9",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "submersion:\n  max_depth_m: 0.5\n",
            keyPath: "submersion.max_depth_m",
            value: "0.5",
            line: 2,
            kind: .outOfRange
        ),
        InvalidCase(
            yaml: "submersion:\n  max_depth_m: 1001\n",
            keyPath: "submersion.max_depth_m",
            value: "1001",
            line: 2,
            kind: .outOfRange
        ),
    ]

    static let invalidValues: [InvalidCase] = [
        InvalidCase(
            yaml: "mqtt:\n  protocol: v31\n",
            keyPath: "mqtt.protocol",
            value: "v31",
            line: 2,
            kind: .invalidValue,
            suggestion: "v311"
        ),
        InvalidCase(
            yaml: "agent:\n  log_level: warn\n",
            keyPath: "agent.log_level",
            value: "warn",
            line: 2,
            kind: .invalidValue,
            suggestion: "warning"
        ),
        InvalidCase(
            yaml: "agent:\n  log_level: INFO\n",
            keyPath: "agent.log_level",
            value: "INFO",
            line: 2,
            kind: .invalidValue,
            suggestion: "info"
        ),
        InvalidCase(
            yaml: "source:\n  kind: simulator\n",
            keyPath: "source.kind",
            value: "simulator",
            line: 2,
            kind: .invalidValue,
            suggestion: "simulated"
        ),
        InvalidCase(
            yaml: "source:\n  simulated:\n    scenario: walk\n",
            keyPath: "source.simulated.scenario",
            value: "walk",
            line: 3,
            kind: .invalidValue,
            suggestion: "walking"
        ),
        InvalidCase(
            yaml: "source:\n  replay:\n    speed: slow\n",
            keyPath: "source.replay.speed",
            value: "slow",
            line: 3,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "source:\n  iio:\n    uri: http://board\n",
            keyPath: "source.iio.uri",
            value: "http://board",
            line: 3,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "topics:\n  root: motion/#\n",
            keyPath: "topics.root",
            value: "motion/#",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "topics:\n  root: motion/+/imu\n",
            keyPath: "topics.root",
            value: "motion/+/imu",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "topics:\n  root: /motion\n",
            keyPath: "topics.root",
            value: "/motion",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "topics:\n  root: motion//imu\n",
            keyPath: "topics.root",
            value: "motion//imu",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "topics:\n  root: motion/\n",
            keyPath: "topics.root",
            value: "motion/",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "topics:\n  root: $SYS/motion\n",
            keyPath: "topics.root",
            value: "$SYS/motion",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(yaml: "topics:\n  root: \"\"\n", keyPath: "topics.root", value: "", line: 2, kind: .invalidValue),
        InvalidCase(
            yaml: "topics:\n  root: motion/{dev}\n",
            keyPath: "topics.root",
            value: "motion/{dev}",
            line: 2,
            kind: .invalidValue,
            suggestion: "{device}"
        ),
        InvalidCase(
            yaml: "topics:\n  root: motion/{device\n",
            keyPath: "topics.root",
            value: "motion/{device",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(yaml: "device:\n  id: a/b\n", keyPath: "device.id", value: "a/b", line: 2, kind: .invalidValue),
        InvalidCase(yaml: "device:\n  id: a+b\n", keyPath: "device.id", value: "a+b", line: 2, kind: .invalidValue),
        InvalidCase(yaml: "device:\n  id: \"a#b\"\n", keyPath: "device.id", value: "a#b", line: 2, kind: .invalidValue),
        InvalidCase(yaml: "device:\n  id: \"\"\n", keyPath: "device.id", value: "", line: 2, kind: .invalidValue),
        InvalidCase(
            yaml: "device:\n  id: \(String(repeating: "x", count: 65))\n",
            keyPath: "device.id",
            value: String(repeating: "x", count: 65),
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "mqtt:\n  client_id: \"\"\n",
            keyPath: "mqtt.client_id",
            value: "",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "mqtt:\n  client_id: agent-{host}\n",
            keyPath: "mqtt.client_id",
            value: "agent-{host}",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "mqtt:\n  host: mqtt://broker\n",
            keyPath: "mqtt.host",
            value: "mqtt://broker",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(yaml: "mqtt:\n  host: \"\"\n", keyPath: "mqtt.host", value: "", line: 2, kind: .invalidValue),
        InvalidCase(
            yaml: "mqtt:\n  password_file: \"\"\n",
            keyPath: "mqtt.password_file",
            value: "",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  fleet_topic: motion/fleet/#\n",
            keyPath: "control.fleet_topic",
            value: "motion/fleet/#",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  fleet_topic: motion/+/control\n",
            keyPath: "control.fleet_topic",
            value: "motion/+/control",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  fleet_topic: $SYS/control\n",
            keyPath: "control.fleet_topic",
            value: "$SYS/control",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  fleet_topic: motion//control\n",
            keyPath: "control.fleet_topic",
            value: "motion//control",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  fleet_topic: \"\"\n",
            keyPath: "control.fleet_topic",
            value: "",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  fleet_topic: motion/{device}/control\n",
            keyPath: "control.fleet_topic",
            value: "motion/{device}/control",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  trusted_keys_file: \"\"\n",
            keyPath: "control.trusted_keys_file",
            value: "",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "submersion:\n  water: saltwater\n",
            keyPath: "submersion.water",
            value: "saltwater",
            line: 2,
            kind: .invalidValue,
            suggestion: "salt"
        ),
        InvalidCase(
            yaml: "submersion:\n  water: brackish\n",
            keyPath: "submersion.water",
            value: "brackish",
            line: 2,
            kind: .invalidValue
        ),
    ]

    static let crossChecks: [InvalidCase] = [
        InvalidCase(
            yaml: "source:\n  kind: replay\n",
            keyPath: "source.replay.file",
            value: nil,
            line: 2,
            kind: .missingValue
        ),
        InvalidCase(
            yaml: "source:\n  kind: replay\n  replay:\n    file: /nonexistent/walk.csv\n",
            keyPath: "source.replay.file",
            value: "/nonexistent/walk.csv",
            line: 4,
            kind: .fileUnavailable
        ),
        InvalidCase(
            yaml: "mqtt:\n  username: agent\n  password_file: /nonexistent/password\n",
            keyPath: "mqtt.password_file",
            value: "/nonexistent/password",
            line: 3,
            kind: .fileUnavailable
        ),
        InvalidCase(
            yaml: "mqtt:\n  password_file: /tmp\n",
            keyPath: "mqtt.password_file",
            value: "/tmp",
            line: 2,
            kind: .fileUnavailable
        ),
        InvalidCase(
            yaml: "mqtt:\n  tls:\n    ca_file: /nonexistent/ca.pem\n",
            keyPath: "mqtt.tls.ca_file",
            value: "/nonexistent/ca.pem",
            line: 3,
            kind: .fileUnavailable
        ),
        InvalidCase(
            yaml: "mqtt:\n  reconnect_min_delay: 10\n  reconnect_max_delay: 5\n",
            keyPath: "mqtt.reconnect_min_delay",
            value: "10",
            line: 2,
            kind: .conflict
        ),
        InvalidCase(
            yaml: "mqtt:\n  reconnect_max_delay: 0.25\n",
            keyPath: "mqtt.reconnect_min_delay",
            value: "0.5",
            line: 2,
            kind: .conflict
        ),
        InvalidCase(
            yaml: "streams:\n  accelerometer:\n    durable: true\n",
            keyPath: "streams.accelerometer.durable",
            value: "true",
            line: 3,
            kind: .conflict
        ),
        InvalidCase(
            yaml: "location:\n  latitude: 48.2\n",
            keyPath: "location.latitude",
            value: "48.2",
            line: 2,
            kind: .conflict
        ),
        InvalidCase(
            yaml: "location:\n  longitude: 16.37\n  altitude_m: 200\n",
            keyPath: "location.longitude",
            value: "16.37",
            line: 2,
            kind: .conflict
        ),
        InvalidCase(
            yaml: "control:\n  trusted_keys_file: /nonexistent/control.key\n",
            keyPath: "control.trusted_keys_file",
            value: "/nonexistent/control.key",
            line: 2,
            kind: .fileUnavailable
        ),
        InvalidCase(
            yaml: "control:\n  trusted_keys_file: /tmp\n",
            keyPath: "control.trusted_keys_file",
            value: "/tmp",
            line: 2,
            kind: .fileUnavailable
        ),
    ]

    static let lists: [InvalidCase] = [
        InvalidCase(
            yaml: "control:\n  groups: line-2\n",
            keyPath: "control.groups",
            value: "line-2",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "control:\n  groups: 7\n",
            keyPath: "control.groups",
            value: "7",
            line: 2,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "control:\n  groups:\n    line: 2\n",
            keyPath: "control.groups",
            value: nil,
            line: 3,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "control:\n  groups:\n    - line-2\n    - [a, b]\n",
            keyPath: "control.groups[1]",
            value: nil,
            line: 4,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "control:\n  groups:\n    - name: line-2\n",
            keyPath: "control.groups[0]",
            value: nil,
            line: 3,
            kind: .wrongType
        ),
        InvalidCase(
            yaml: "control:\n  groups: [line-2, ~]\n",
            keyPath: "control.groups[1]",
            value: "~",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  groups:\n    - line-2\n    - null\n",
            keyPath: "control.groups[1]",
            value: "null",
            line: 4,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  groups: [\"\"]\n",
            keyPath: "control.groups[0]",
            value: "",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  groups:\n    - line-2\n    - line/3\n",
            keyPath: "control.groups[1]",
            value: "line/3",
            line: 4,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  groups: [a, b, \"c+\"]\n",
            keyPath: "control.groups[2]",
            value: "c+",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  groups: [\"#all\"]\n",
            keyPath: "control.groups[0]",
            value: "#all",
            line: 2,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  groups:\n    - ggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg\n",
            keyPath: "control.groups[0]",
            value: "ggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg",
            line: 3,
            kind: .invalidValue
        ),
        InvalidCase(
            yaml: "control:\n  groups:\n    - a\n    - b\n    - a\n",
            keyPath: "control.groups[2]",
            value: "a",
            line: 5,
            kind: .invalidValue
        ),
    ]

    @Test(arguments: unknownKeys + wrongTypes + outOfRange + invalidValues + crossChecks + lists)
    func reportsTheKeyValueAndLine(_ invalid: InvalidCase) throws {
        let error = try #require(decodingError(invalid.yaml))
        #expect(error.errors.count == 1, "\(error)")
        #expect(error.kind == invalid.kind)
        #expect(error.keyPath == invalid.keyPath)
        #expect(error.value == invalid.value)
        #expect(error.line == invalid.line)
        #expect(error.file == "config.yaml")
        #expect(error.suggestion == invalid.suggestion)
        #expect(!error.allowed.isEmpty)
        #expect(error.description.hasPrefix("config.yaml:\(invalid.line): "))
    }

    @Test func describesOneProblemInOneSentence() throws {
        let yaml = String(repeating: "\n", count: 20) + "streams:\n  accelerometer:\n    rate_hz: 5000\n"
        let error = try #require(decodingError(yaml))
        #expect(
            error.description
                == "config.yaml:23: streams.accelerometer.rate_hz: 5000 is out of range — allowed: a number > 0 and ≤ 1000 (Hz)"
        )
    }

    @Test func describesUnknownKeysWithTheSuggestionAndTheKnownKeys() throws {
        let error = try #require(decodingError("streams:\n  accelerometer:\n    rate: 10\n"))
        #expect(
            error.description
                == "config.yaml:3: streams.accelerometer.rate: \"rate\" is not a known key in streams.accelerometer"
                + " — did you mean rate_hz? — allowed: enabled, rate_hz, qos, retain, durable, expiry_s, batch, encoding"
        )
    }

    @Test func describesAListElementWithItsIndexAndLine() throws {
        let error = try #require(decodingError("control:\n  groups:\n    - line-2\n    - line/3\n"))
        #expect(
            error.description
                == "config.yaml:4: control.groups[1]: \"line/3\" contains / + or #, which would change the topic levels"
                + " — allowed: a list of distinct group names, each 1–64 characters without / + #"
                + " (e.g. [line-2, calibration-rig])"
        )
    }

    @Test func reportsEveryBadElementOfAList() throws {
        let yaml = "control:\n  groups:\n    - ok\n    - a/b\n    - \"\"\n    - fine\n    - {x: 1}\n"
        let error = try #require(decodingError(yaml))
        #expect(error.errors.map(\.keyPath) == ["control.groups[1]", "control.groups[2]", "control.groups[4]"])
        #expect(error.errors.map(\.line) == [4, 5, 7])
        #expect(error.errors.map(\.kind) == [.invalidValue, .invalidValue, .wrongType])
    }

    @Test func aScalarWhereAListBelongsSaysHowToWriteTheList() throws {
        let error = try #require(decodingError("control:\n  groups: line-2, lab\n"))
        #expect(error.problem == "is a single value, not a list (write [line-2, lab], or one `- name` per line)")
    }

    @Test func reportsEveryProblemInFileOrder() throws {
        let yaml = """
            mqtt:
              port: 0
              protcol: v5
              keepalive: 2
            streams:
              accelerometer:
                rate_hz: 5000
                qos: 7
            topics:
              root: motion/#
            """
        let error = try #require(decodingError(yaml))
        #expect(
            error.errors.map(\.keyPath) == [
                "mqtt.port", "mqtt.protcol", "mqtt.keepalive", "streams.accelerometer.rate_hz",
                "streams.accelerometer.qos", "topics.root",
            ]
        )
        #expect(error.errors.map(\.line) == [2, 3, 4, 7, 8, 10])
        #expect(error.keyPath == "mqtt.port")
        let lines = error.description.split(separator: "\n")
        #expect(lines.first == "config.yaml: 6 configuration problems:")
        #expect(lines.count == 7)
        #expect(lines.last?.contains("config.yaml:10: topics.root: \"motion/#\"") == true)
    }

    @Test func reportsFileAndValueProblemsTogether() throws {
        let yaml =
            "source:\n  kind: replay\nmqtt:\n  port: 99999\n  reconnect_min_delay: 60\n  reconnect_max_delay: 1\n"
        let error = try #require(decodingError(yaml))
        #expect(error.errors.map(\.keyPath) == ["source.replay.file", "mqtt.port", "mqtt.reconnect_min_delay"])
        #expect(error.errors.map(\.kind) == [.missingValue, .outOfRange, .conflict])
    }
}
