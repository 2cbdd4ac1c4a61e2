import AgentPorts
import Foundation
import Testing

@testable import AgentConfig

@Suite struct LoaderTests {
    @Test(arguments: [
        "", "\n", "# only a comment\n", "---\n",
        "device:\nagent:\nsource:\n  simulated:\nmqtt:\n  tls:\nstreams:\n  gyroscope:\n",
        "location:\n  latitude:\n  longitude: ~\ncontrol:\n  groups:\noutbox:\npedometer:\naltimeter:\nsubmersion:\n",
    ])
    func emptyFilesAndSectionsMeanDefaults(_ yaml: String) throws {
        #expect(try ConfigurationLoader.decode(yaml: yaml) == AgentConfiguration())
    }

    @Test func missingKeysKeepTheirDefaults() throws {
        let configuration = try ConfigurationLoader.decode(yaml: "streams:\n  gyroscope:\n    rate_hz: 100\n")
        var expected = AgentConfiguration()
        expected.streams[.gyroscope]?.rateHz = 100
        #expect(configuration == expected)
    }

    @Test func readsEveryKey() throws {
        let directory = try TemporaryDirectory()
        let password = try directory.write("password", "s3cret\n")
        let ca = try directory.write("ca.pem", "-----BEGIN CERTIFICATE-----\n")
        let recording = try directory.write("walk.csv", "timestamp\n")
        let key = try directory.write("trusted.keys", "ops-1 ed25519 AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=\n")
        let yaml = """
            device:
              id: bench-7
            location: {latitude: -33.9, longitude: 151.2, altitude_m: 58}
            agent:
              state_dir: /var/tmp/motion
              log_level: debug
            source:
              kind: replay
              simulated: {scenario: stairs-up, seed: 18446744073709551615, rate_hz: 4000, latitude: -33.9, longitude: 151.2, altitude_m: -12.5}
              iio:
                uri: ip:192.168.1.20
              replay:
                file: \(recording)
                speed: fast
                loop: yes
            mqtt:
              host: broker.example
              port: 8883
              client_id: imu-{device}
              protocol: v311
              keepalive: 65535
              clean_session: false
              username: agent
              password_file: \(password)
              tls:
                ca_file: \(ca)
              reconnect_min_delay: 1_000
              reconnect_max_delay: 3600
              max_inflight: 1
            topics:
              root: plant/line-2/{device}/imu
            control:
              fleet_topic: plant/all/commands
              groups:
                - line-2
                - "0042"
              persist: off
              max_age_s: 0
              rate_limit_per_s: 0.5
              rate_limit_burst: 10000
              trusted_keys_file: \(key)
              max_payload_bytes: 65536
            outbox: {max_bytes: 1_073_741_824, max_age_s: 604800}
            streams:
              accelerometer: {enabled: false, rate_hz: 1000, qos: 2, retain: true}
              gyroscope: {rate_hz: 0.1}
            pedometer:
              user_height_m: 0.5
              history_retention_days: 365
            altimeter:
              sea_level_pressure_kpa: 80
            submersion:
              water: salt
              max_depth_m: 1000
            """
        let configuration = try ConfigurationLoader.decode(yaml: yaml)
        var expected = AgentConfiguration()
        expected.device.id = "bench-7"
        expected.location.latitude = -33.9
        expected.location.longitude = 151.2
        expected.location.altitudeM = 58
        expected.agent.stateDir = "/var/tmp/motion"
        expected.agent.logLevel = .debug
        expected.source.kind = .replay
        expected.source.simulated.scenario = "stairs-up"
        expected.source.simulated.seed = .max
        expected.source.simulated.rateHz = 4000
        expected.source.simulated.latitude = -33.9
        expected.source.simulated.longitude = 151.2
        expected.source.simulated.altitudeM = -12.5
        expected.source.iio.uri = "ip:192.168.1.20"
        expected.source.replay.file = recording
        expected.source.replay.speed = .fast
        expected.source.replay.loop = true
        expected.mqtt.host = "broker.example"
        expected.mqtt.port = 8883
        expected.mqtt.clientID = "imu-{device}"
        expected.mqtt.protocolVersion = .v311
        expected.mqtt.keepalive = 65535
        expected.mqtt.cleanSession = false
        expected.mqtt.username = "agent"
        expected.mqtt.passwordFile = password
        var tls = TLSSettings()
        tls.caFile = ca
        expected.mqtt.tls = tls
        expected.mqtt.reconnectMinDelay = 1000
        expected.mqtt.reconnectMaxDelay = 3600
        expected.mqtt.maxInflight = 1
        expected.topics.root = "plant/line-2/{device}/imu"
        expected.control.fleetTopic = "plant/all/commands"
        expected.control.groups = ["line-2", "0042"]
        expected.control.persist = false
        expected.control.maxAgeSeconds = 0
        expected.control.rateLimitPerSecond = 0.5
        expected.control.rateLimitBurst = 10000
        expected.control.trustedKeysFile = key
        expected.control.maxPayloadBytes = 65536
        expected.outbox.maxBytes = 1_073_741_824
        expected.outbox.maxAgeSeconds = 604800
        expected.pedometer.userHeightM = 0.5
        expected.pedometer.historyRetentionDays = 365
        expected.altimeter.seaLevelPressureKPa = 80
        expected.submersion.water = .salt
        expected.submersion.maxDepthM = 1000
        expected.streams[.accelerometer] = StreamSettings(enabled: false, rateHz: 1000, qos: 2, retain: true)
        expected.streams[.gyroscope]?.rateHz = 0.1
        #expect(configuration == expected)
        #expect(configuration.resolvedClientID == "imu-bench-7")
        #expect(configuration.resolvedTopicRoot == "plant/line-2/bench-7/imu")
        #expect(configuration.location.isConfigured)
        #expect(try configuration.control.readTrustedKeys()?.keys.map(\.id) == ["ops-1"])
    }

    @Test(arguments: ["control:\n  groups: []\n", "control:\n  groups: [ ]\n"])
    func anEmptyListMeansNoGroups(_ yaml: String) throws {
        #expect(try ConfigurationLoader.decode(yaml: yaml).control.groups == [])
    }

    @Test func aListInTheFileReplacesTheDefaultListWhole() throws {
        let block = try ConfigurationLoader.decode(yaml: "control:\n  groups:\n    - b\n    - a\n")
        let flow = try ConfigurationLoader.decode(yaml: "control:\n  groups: [b, a]\n")
        #expect(block.control.groups == ["b", "a"])
        #expect(flow == block)
    }

    @Test func aLocationNeedsLatitudeAndLongitudeButNotAltitude() throws {
        let configuration = try ConfigurationLoader.decode(yaml: "location:\n  latitude: 0\n  longitude: 0\n")
        #expect(configuration.location.isConfigured)
        #expect(configuration.location.altitudeM == 0)
        // An altitude alone configures nothing, and is no error: it waits for a latitude and longitude.
        let altitudeOnly = try ConfigurationLoader.decode(yaml: "location:\n  altitude_m: 200\n")
        #expect(!altitudeOnly.location.isConfigured)
    }

    @Test func aHalfLocationIsOneConflictNamingTheMissingKey() throws {
        let error = try #require(decodingError("\nlocation:\n  latitude: 48.2\n"))
        #expect(error.errors.count == 1)
        #expect(
            error.description
                == "config.yaml:3: location.latitude: 48.2 is set without location.longitude"
                + " — allowed: set both location.latitude and location.longitude, or neither"
        )
    }

    @Test func aMalformedTrustedKeysFileIsRefusedAtLoad() throws {
        let directory = try TemporaryDirectory()
        try directory.write("trusted", "ops-1 ed25519 AAAA\n")
        let file = try directory.write("config.yaml", "control:\n  trusted_keys_file: trusted\n")
        let error = try #require(loadingError(file))
        #expect(error.errors.count == 1, "\(error)")
        #expect(error.kind == .invalidValue)
        #expect(error.keyPath == "control.trusted_keys_file")
        #expect(error.value == directory.path + "/trusted")
        #expect(error.line == 2)
        #expect(error.problem.contains("not the base64 of 32 bytes"), "\(error)")
    }

    /// Round two's shared HMAC key is gone: a config.yaml that still names it is refused with the way to
    /// operator keys, not with "unknown key".
    @Test func theRemovedHMACKeyFileNamesItsReplacement() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("config.yaml", "control:\n  hmac_key_file: control.key\n")
        let error = try #require(loadingError(file))
        #expect(error.keyPath == "control.hmac_key_file")
        #expect(error.problem.contains("was removed"), "\(error)")
        #expect(error.allowed.contains("motion-agent keys generate"), "\(error)")
        #expect(error.allowed.contains("control.trusted_keys_file"), "\(error)")
    }

    @Test(arguments: [
        ("mqtt:\n  host: [unclosed\n", 3),
        ("mqtt:\n\thost: broker\n", 2),
        ("mqtt:\n  host: a\n   port: 1\n", 3),
        ("device:\n  id: \"open\n", 3),
        ("a: 1\n---\nb: 2\n", 2),
        ("mqtt:\n  host: *nowhere\n", 2),
    ])
    func syntaxErrorsGiveTheLine(_ yaml: String, _ line: Int) throws {
        let error = try #require(decodingError(yaml))
        #expect(error.kind == .syntax)
        #expect(error.line == line, "\(error)")
        #expect(error.description.hasPrefix("config.yaml:\(line): "), "\(error)")
        #expect(error.description.contains("is not valid YAML"))
    }

    @Test func duplicateKeysAreReportedWithTheirLine() throws {
        let error = try #require(decodingError("mqtt:\n  host: a\n  port: 1\n  port: 2\n"))
        #expect(error.kind == .duplicateKey)
        #expect(error.keyPath == "port")
        #expect(error.line == 3)
    }

    @Test func nullKeepsTheDefaultButQuotedNullIsText() throws {
        let configuration = try ConfigurationLoader.decode(yaml: "mqtt:\n  port: ~\n  username: \"null\"\n")
        #expect(configuration.mqtt.port == 1883)
        #expect(configuration.mqtt.username == "null")
    }

    @Test func textMayLookLikeANumber() throws {
        let configuration = try ConfigurationLoader.decode(yaml: "device:\n  id: 0042\nmqtt:\n  username: 123\n")
        #expect(configuration.device.id == "0042")
        #expect(configuration.mqtt.username == "123")
    }

    @Test func aValidTLSClientCertificateConfigurationLoads() throws {
        let directory = try TemporaryDirectory()
        for name in ["ca.pem", "client.pem", "client.key"] { try directory.write(name, "PEM\n") }
        let yaml = "mqtt:\n  tls:\n    ca_file: ca.pem\n    cert_file: client.pem\n    key_file: client.key\n"
        let file = try directory.write("config.yaml", yaml)
        let configuration = try ConfigurationLoader.load(file: file, environment: [:])
        // Relative paths in a file are relative to the file's directory.
        #expect(configuration.mqtt.tls?.caFile == directory.path + "/ca.pem")
        #expect(configuration.mqtt.tls?.certFile == directory.path + "/client.pem")
        #expect(configuration.mqtt.tls?.keyFile == directory.path + "/client.key")
    }

    @Test(arguments: [
        ("    ca_file: ca.pem\n    cert_file: client.pem\n", "mqtt.tls.key_file", 4),
        ("    ca_file: ca.pem\n    key_file: client.key\n", "mqtt.tls.cert_file", 4),
        ("    cert_file: client.pem\n    key_file: client.key\n", "mqtt.tls.ca_file", 2),
    ])
    func incompleteTLSIsRefused(_ files: String, _ keyPath: String, _ line: Int) throws {
        let directory = try TemporaryDirectory()
        for name in ["ca.pem", "client.pem", "client.key"] { try directory.write(name, "PEM\n") }
        let file = try directory.write("config.yaml", "mqtt:\n  tls:\n" + files)
        let error = try #require(loadingError(file))
        #expect(error.errors.count == 1, "\(error)")
        #expect(error.kind == .missingValue)
        #expect(error.keyPath == keyPath)
        #expect(error.line == line)
    }

    @Test func mqtt311NeedsAUsernameWithAPassword() throws {
        let directory = try TemporaryDirectory()
        try directory.write("password", "pw\n")
        let file = try directory.write("config.yaml", "mqtt:\n  protocol: v311\n  password_file: password\n")
        let error = try #require(loadingError(file))
        #expect(error.kind == .conflict)
        #expect(error.keyPath == "mqtt.password_file")
        #expect(error.line == 3)
        // MQTT 5 allows a password alone.
        try directory.write("config.yaml", "mqtt:\n  protocol: v5\n  password_file: password\n")
        #expect(try ConfigurationLoader.load(file: file, environment: [:]).mqtt.readPassword() == "pw")
    }

    @Test func anEmptyPasswordFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        try directory.write("password", "\nsecond line\n")
        let file = try directory.write("config.yaml", "mqtt:\n  username: a\n  password_file: password\n")
        let error = try #require(loadingError(file))
        #expect(error.kind == .fileUnavailable)
        #expect(error.value == directory.path + "/password")
        #expect(error.line == 3)
    }

    @Test func aMissingFileIsReportedWithItsPath() throws {
        let error = try #require(loadingError("/nonexistent/motion-agent/config.yaml"))
        #expect(error.kind == .fileUnavailable)
        #expect(error.file == "/nonexistent/motion-agent/config.yaml")
        #expect(error.description.contains("No such file or directory"), "\(error)")
    }

    @Test func errorsNameTheFileAsGiven() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("motion.yaml", "\n\nmqtt:\n  port: 0\n")
        let error = try #require(loadingError(file))
        #expect(error.file == file)
        #expect(error.description.hasPrefix("\(file):4: mqtt.port: 0 is out of range"))
    }

    @Test(
        arguments: [
            (["./config.yaml", "/etc/motion-agent/config.yaml"], "./config.yaml"),
            (["/etc/motion-agent/config.yaml"], "/etc/motion-agent/config.yaml"),
            ([], nil),
        ] as [([String], String?)]
    )
    func defaultConfigPathPrefersTheWorkingDirectory(_ existing: [String], _ expected: String?) {
        #expect(ConfigurationLoader.defaultConfigPath(fileExists: existing.contains) == expected)
    }
}

/// Loads `file`, which must fail, and returns the error.
func loadingError(_ file: String, environment: [String: String] = [:]) -> ConfigurationError? {
    do {
        _ = try ConfigurationLoader.load(file: file, environment: environment)
        return nil
    } catch {
        return error
    }
}
