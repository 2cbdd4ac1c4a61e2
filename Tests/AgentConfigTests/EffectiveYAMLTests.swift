import AgentPorts
import Foundation
import Testing

@testable import AgentConfig

@Suite struct EffectiveYAMLTests {
    /// Decoding the rendering of `configuration` must give it back, and rendering again the same text.
    func expectRoundTrip(
        _ configuration: AgentConfiguration,
        sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        let yaml = configuration.effectiveYAML()
        let reloaded = try ConfigurationLoader.decode(yaml: yaml)
        #expect(reloaded == configuration, "\(yaml)", sourceLocation: sourceLocation)
        #expect(reloaded.effectiveYAML() == yaml, sourceLocation: sourceLocation)
    }

    @Test func defaultsRoundTrip() throws {
        try expectRoundTrip(AgentConfiguration())
    }

    @Test func everyChangedValueRoundTrips() throws {
        let directory = try TemporaryDirectory()
        let password = try directory.write("pass word", "pw\n")
        let ca = try directory.write("ca.pem", "PEM\n")
        let cert = try directory.write("client.pem", "PEM\n")
        let key = try directory.write("client.key", "PEM\n")
        let recording = try directory.write("walk.csv", "t\n")
        let trustedKeys = try directory.write(
            "trusted keys",
            "ops-1 ed25519 AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=\n"
        )
        var configuration = AgentConfiguration()
        configuration.device.id = "0042"
        configuration.location.latitude = -90
        configuration.location.longitude = 179.99999999
        configuration.location.altitudeM = -0.5
        configuration.agent.stateDir = directory.path + "/state"
        configuration.agent.logLevel = .trace
        configuration.source.kind = .replay
        configuration.source.simulated.scenario = "mixed-day"
        configuration.source.simulated.seed = .max
        configuration.source.simulated.rateHz = 3999.5
        configuration.source.simulated.latitude = -0.000001
        configuration.source.simulated.longitude = 179.99999999
        configuration.source.simulated.altitudeM = 1e-5
        configuration.source.iio.uri = "serial:/dev/ttyUSB0,115200,8n1"
        configuration.source.replay.file = recording
        configuration.source.replay.speed = .fast
        configuration.source.replay.loop = true
        configuration.mqtt.host = "::1"
        configuration.mqtt.port = 65535
        configuration.mqtt.clientID = "agent: {device} #1"
        configuration.mqtt.protocolVersion = .v311
        configuration.mqtt.keepalive = 5
        configuration.mqtt.cleanSession = false
        configuration.mqtt.username = "null"
        configuration.mqtt.passwordFile = password
        var tls = TLSSettings()
        tls.caFile = ca
        tls.certFile = cert
        tls.keyFile = key
        configuration.mqtt.tls = tls
        configuration.mqtt.reconnectMinDelay = 0.1
        configuration.mqtt.reconnectMaxDelay = 0.1
        configuration.mqtt.maxInflight = 65535
        configuration.topics.root = "Gerät/\"quoted\"/{device}/yes"
        configuration.control.fleetTopic = "fleet/no/1e3"
        configuration.control.groups = ["yes", "123", "~", "a: b", "Gerät", "[x]"]
        configuration.control.persist = false
        configuration.control.maxAgeSeconds = 86400
        configuration.control.rateLimitPerSecond = 0.001
        configuration.control.rateLimitBurst = 1
        configuration.control.trustedKeysFile = trustedKeys
        configuration.control.maxPayloadBytes = 256
        configuration.outbox.maxBytes = 65536
        configuration.outbox.maxAgeSeconds = 1
        configuration.pedometer.userHeightM = 1.8300000000000001
        configuration.pedometer.historyRetentionDays = 1
        configuration.altimeter.seaLevelPressureKPa = 102.1
        configuration.submersion.water = .salt
        configuration.submersion.maxDepthM = 1.5
        configuration.streams[.accelerometer] = StreamSettings(enabled: false, rateHz: 0.001, qos: 2, retain: true)
        configuration.streams[.magnetometer] = StreamSettings(enabled: true, rateHz: 1000, qos: 1, retain: false)
        try expectRoundTrip(configuration)
    }

    @Test(arguments: ["yes", "no", "true", "123", "1e3", "~", "", " padded ", "#comment", "a: b", "- item", "'", "\\"])
    func awkwardTextRoundTrips(_ text: String) throws {
        var configuration = AgentConfiguration()
        configuration.mqtt.username = text
        try expectRoundTrip(configuration)
    }

    @Test(arguments: [[], ["line-2"], ["null", "no", "0x10", "- item", "'", "\\", " padded ", "a, b", "{x}"]])
    func groupListsRoundTrip(_ groups: [String]) throws {
        var configuration = AgentConfiguration()
        configuration.control.groups = groups
        try expectRoundTrip(configuration)
    }

    @Test func showsEnvironmentOverridesAndDefaults() throws {
        let configuration = try ConfigurationLoader.decode(
            yaml: "mqtt:\n  port: 1884\n",
            environment: ["MOTION_AGENT_MQTT_HOST": "broker.internal"]
        )
        let yaml = configuration.effectiveYAML()
        #expect(yaml.contains("host: \"broker.internal\""))
        #expect(yaml.contains("port: 1884"))
        #expect(yaml.contains("rate_hz: 25"))
        #expect(yaml.contains("password_file: null"))
        #expect(yaml.contains("latitude: null"))
        #expect(yaml.contains("groups: []"))
        #expect(yaml.contains("sea_level_pressure_kpa: 101.325"))
        try expectRoundTrip(configuration)
    }

    @Test func aFileWrittenFromTheEffectiveYAMLLoadsEqual() throws {
        let directory = try TemporaryDirectory()
        try directory.write("secrets/password", "pw\n")
        let original = try directory.write("config.yaml", "mqtt:\n  username: u\n  password_file: secrets/password\n")
        let configuration = try ConfigurationLoader.load(file: original, environment: [:])
        let elsewhere = try TemporaryDirectory()
        let copy = try elsewhere.write("effective.yaml", configuration.effectiveYAML())
        #expect(try ConfigurationLoader.load(file: copy, environment: [:]) == configuration)
    }
}
