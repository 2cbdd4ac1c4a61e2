import Testing

@testable import AgentConfig

/// `mqtt.servers`, `mqtt.protocol: auto` and `mqtt.session_expiry_s`.
@Suite struct ServersSettingsTests {
    @Test func serversListHostPortPairsAndAHostAloneTakesMqttPort() throws {
        let configuration = try ConfigurationLoader.decode(
            yaml: "mqtt:\n  port: 8883\n  servers: [mqtt-a.example.net:1883, '[fd00::1]:1884', mqtt-c]\n"
        )
        #expect(
            configuration.mqtt.endpoints == [
                MQTTEndpoint(host: "mqtt-a.example.net", port: 1883), MQTTEndpoint(host: "fd00::1", port: 1884),
                MQTTEndpoint(host: "mqtt-c", port: 8883),
            ]
        )
        #expect(
            configuration.mqtt.endpoints.map(\.description) == [
                "mqtt-a.example.net:1883", "[fd00::1]:1884", "mqtt-c:8883",
            ]
        )
    }

    @Test func withoutServersTheOneEndpointIsHostAndPort() throws {
        let configuration = try ConfigurationLoader.decode(yaml: "mqtt:\n  host: broker\n  port: 1884\n  servers: []\n")
        #expect(configuration.mqtt.endpoints == [MQTTEndpoint(host: "broker", port: 1884)])
    }

    @Test func hostTogetherWithServersIsRefusedNamingBothAndTheFix() throws {
        let error = try #require(decodingError("mqtt:\n  host: broker\n  servers: [a:1883, b:1883]\n"))
        #expect(error.keyPath == "mqtt.host")
        #expect(error.kind == .conflict)
        #expect(error.line == 2)
        #expect(error.problem == "is set together with mqtt.servers (a:1883, b:1883)")
        #expect(error.allowed.contains("leave mqtt.host empty"))
        // An empty host (as the shipped config.yaml's host: line, emptied) is no conflict.
        let configuration = try ConfigurationLoader.decode(yaml: "mqtt:\n  host:\n  servers: [a:1883, b:1883]\n")
        #expect(configuration.mqtt.endpoints.count == 2)
    }

    @Test func theEnvironmentsHostTogetherWithServersIsRefusedToo() throws {
        let error = try #require(
            decodingError("mqtt:\n  servers: [a:1883]\n", environment: ["MOTION_AGENT_MQTT_HOST": "broker"])
        )
        #expect(error.keyPath == "mqtt.host")
        #expect(error.variable == "MOTION_AGENT_MQTT_HOST")
    }

    @Test(arguments: [
        ("a:0", "has the port \"0\", not 1–65535"), ("a:http", "has the port \"http\", not 1–65535"),
        ("fd00::1:1883", "is an IPv6 address without brackets; write [address]:port"),
        ("mqtt://a:1883", "has a URL scheme; give the host alone (the port is mqtt.port)"),
        ("[fd00::1", "opens [ without closing it"),
    ])
    func aBadServerIsRefusedWithItsIndex(server: String, problem: String) throws {
        let error = try #require(decodingError("mqtt:\n  servers: [ok:1883, '\(server)']\n"))
        #expect(error.keyPath == "mqtt.servers[1]")
        #expect(error.problem == problem)
    }

    @Test func aServerListedTwiceIsRefused() throws {
        let error = try #require(decodingError("mqtt:\n  servers: [a:1883, a:1883]\n"))
        #expect(error.keyPath == "mqtt.servers[1]")
        #expect(error.problem == "is already in the list")
    }

    @Test func protocolAutoAndSessionExpiry() throws {
        let configuration = try ConfigurationLoader.decode(
            yaml: "mqtt:\n  protocol: auto\n  clean_session: false\n  session_expiry_s: 3600\n"
        )
        #expect(configuration.mqtt.protocolVersion == .auto)
        #expect(configuration.mqtt.sessionExpirySeconds == 3600)
        let error = try #require(decodingError("mqtt:\n  session_expiry_s: 4294967295\n"))
        #expect(error.keyPath == "mqtt.session_expiry_s")
        #expect(error.kind == .outOfRange)
    }
}

/// `mqtt.servers` entries written as `{host, port}` sections, as the issue words them, beside `host:port` texts.
@Suite struct ServerSectionsTests {
    @Test func sectionsAndTextsMixAndAHostAloneTakesMqttPort() throws {
        let configuration = try ConfigurationLoader.decode(
            yaml: """
                mqtt:
                  port: 8883
                  servers:
                    - {host: broker-a, port: 1884}
                    - broker-b:1883
                    - host: fd00::1
                      port: 1885
                    - {host: broker-c}
                """
        )
        #expect(
            configuration.mqtt.endpoints == [
                MQTTEndpoint(host: "broker-a", port: 1884), MQTTEndpoint(host: "broker-b", port: 1883),
                MQTTEndpoint(host: "fd00::1", port: 1885), MQTTEndpoint(host: "broker-c", port: 8883),
            ]
        )
    }

    @Test(arguments: [
        ("{host: a, prot: 1883}", "has the key \"prot\"; its keys are host, port"),
        ("{port: 1883}", "has no host (write {host: broker-b, port: 8883})"),
        ("{host: a, port: 70000}", "has the port \"70000\", not 1–65535"),
        ("{host: [a, b]}", "has no single value for host"),
        ("{host: '[fd00::1]', port: 1}", "has a host in brackets; write the address alone"),
        ("{host: 'mqtt://a', port: 1883}", "has a URL scheme; give the host alone (the port is mqtt.port)"),
    ])
    func aMalformedSectionIsRefusedWithItsIndexAndTheFix(section: String, problem: String) throws {
        let error = try #require(decodingError("mqtt:\n  servers: [ok:1883, \(section)]\n"))
        #expect(error.keyPath == "mqtt.servers[1]")
        #expect(error.problem == problem)
        #expect(error.allowed.contains("{host, port} section"))
    }

    @Test func aSectionNamingAServerListedAsTextIsADuplicate() throws {
        let error = try #require(decodingError("mqtt:\n  servers: [a:1883, {host: a, port: 1883}]\n"))
        #expect(error.keyPath == "mqtt.servers[1]")
        #expect(error.problem == "is already in the list")
    }
}
