import Foundation
import Testing

@testable import AgentConfig

/// Secrets the agent holds — the broker password and the TLS client key — are refused unless only root or the
/// agent's user own them and nobody but that owner (and its group) may read them, with the fix in the message;
/// and a password about to cross the network in clear is warned about.
@Suite struct SecretFileTests {
    @Test(arguments: [
        (0o644 as mode_t, "is readable by every user of this machine (mode 0644)"),
        (0o604 as mode_t, "is readable by every user of this machine (mode 0604)"),
        (0o620 as mode_t, "is writable by its group or by others (mode 0620)"),
        (0o602 as mode_t, "is writable by its group or by others (mode 0602)"),
    ])
    func aPasswordFileOthersMayReadOrWriteIsRefusedNamingTheFix(_ mode: mode_t, _ problem: String) throws {
        let directory = try TemporaryDirectory()
        let password = try directory.writeSecret("password", "pw\n")
        let file = try directory.write("config.yaml", "mqtt:\n  username: u\n  password_file: password\n")
        #expect(chmod(password, mode) == 0)
        let error = try #require(loadingError(file))
        #expect(error.errors.count == 1, "\(error)")
        let refusal = try #require(error.errors.first)
        #expect(refusal.keyPath == "mqtt.password_file")
        #expect(refusal.problem.contains(problem), "\(refusal.problem)")
        #expect(refusal.problem.contains("chmod 600 \(password)"), "\(refusal.problem)")
        // Its owner and group only: loads.
        for allowed: mode_t in [0o600, 0o640, 0o400] {
            #expect(chmod(password, allowed) == 0)
            #expect(loadingError(file) == nil, "mode \(String(allowed, radix: 8))")
        }
    }

    @Test func aTLSKeyOthersMayReadIsRefusedAndItsCertificateIsNot() throws {
        let directory = try TemporaryDirectory()
        for name in ["ca.pem", "client.pem"] { try directory.write(name, "PEM\n") }
        let key = try directory.write("client.key", "PEM\n")
        #expect(chmod(key, 0o644) == 0)
        let yaml = "mqtt:\n  tls:\n    ca_file: ca.pem\n    cert_file: client.pem\n    key_file: client.key\n"
        let file = try directory.write("config.yaml", yaml)
        let error = try #require(loadingError(file))
        #expect(error.errors.map(\.keyPath) == ["mqtt.tls.key_file"], "\(error)")
        #expect(error.errors.first?.problem.contains("readable by every user") == true)
        #expect(error.errors.first?.problem.contains("chmod 600 \(key)") == true)
        #expect(chmod(key, 0o600) == 0)
        #expect(loadingError(file) == nil)
    }

    @Test func aSecretOfAnotherUserIsRefusedWhateverItsMode() {
        // Pure check on owner and mode: user 1234 owns it, the agent runs as 999.
        let problem = FileAccess.readableByOthers(
            "/etc/motion-agent/password",
            owner: 1234,
            mode: 0o600,
            agentUser: 999
        )
        #expect(problem?.problem.contains("belongs to user 1234, neither root nor the agent's user (999)") == true)
        #expect(problem?.problem.contains("chown root:motion-agent /etc/motion-agent/password") == true)
        #expect(FileAccess.readableByOthers("/p", owner: 0, mode: 0o640, agentUser: 999) == nil)
        #expect(FileAccess.readableByOthers("/p", owner: 999, mode: 0o600, agentUser: 999) == nil)
    }

    @Test func aPasswordSentInClearToAnotherMachineIsWarnedAbout() throws {
        var mqtt = MQTTSettings()
        mqtt.host = "broker.example"
        let warning = try #require(mqtt.cleartextPasswordWarning(hasPassword: true))
        #expect(warning.contains("the MQTT password goes to broker.example:1883 in clear"))
        #expect(warning.contains("set mqtt.tls.ca_file"))
        #expect(warning.contains("8883"))
        // No password, TLS on, or only this machine's loopback: nothing to warn about.
        #expect(mqtt.cleartextPasswordWarning(hasPassword: false) == nil)
        var tls = mqtt
        tls.tls = TLSSettings()
        #expect(tls.cleartextPasswordWarning(hasPassword: true) == nil)
        for host in ["127.0.0.1", "127.8.9.10", "localhost", "::1"] {
            var local = mqtt
            local.host = host
            #expect(local.cleartextPasswordWarning(hasPassword: true) == nil, "\(host)")
        }
        // Among several servers, the remote ones are named.
        var servers = mqtt
        servers.servers = ["127.0.0.1:1883", "10.0.0.7:1883"]
        let named = try #require(servers.cleartextPasswordWarning(hasPassword: true))
        #expect(named.contains("goes to 10.0.0.7:1883 in clear"))
        #expect(!named.contains("127.0.0.1"))
    }

    @Test(arguments: ["127.0.0.256", "127.0.0", "128.0.0.1", "localhost.example", "::2"])
    func notLoopback(_ host: String) {
        #expect(!MQTTEndpoint(host: host, port: 1883).isLoopback)
    }
}
