import Foundation
import TestSupport
import Testing

/// The real agent warns at start when its broker password would cross the network in clear (no mqtt.tls, a broker
/// that is not this machine), and refuses a password file every user may read, naming the fix.
@Suite(.timeLimit(.minutes(5)), .serialized) struct CleartextPasswordEndToEndTests {
    static func config(host: String, passwordFile: String) -> String {
        """
        device:
          id: cleartext
        agent:
          state_dir: state
        source:
          kind: simulated
        mqtt:
          host: \(host)
          port: 1883
          username: cleartext
          password_file: \(passwordFile)
          reconnect_min_delay: 0.2
          reconnect_max_delay: 1
        """
    }

    static func passwordFile(mode: mode_t) throws -> String {
        let directory = NSTemporaryDirectory() + "motion-cleartext-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/password"
        try "secret\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(chmod(path, mode) == 0)
        return path
    }

    @Test func aPasswordToAnotherHostWithoutTLSIsWarnedAboutAtStart() async throws {
        // 192.0.2.1 (TEST-NET-1, RFC 5737) is nobody's broker: the warning comes before any connection.
        let agent = try AgentProcess(
            config: Self.config(host: "192.0.2.1", passwordFile: try Self.passwordFile(mode: 0o600))
        )
        #expect(
            await agent.runner.waitForOutput(
                containing: "the MQTT password goes to 192.0.2.1:1883 in clear: mqtt.tls is off",
                timeout: 20
            ),
            "agent log: \(agent.runner.standardError.suffix(3000))"
        )
        agent.runner.terminate()
        _ = await agent.runner.waitForExit(timeout: 15)
    }

    @Test func aPasswordToThisMachineIsNotWarnedAbout() async throws {
        let agent = try AgentProcess(
            config: Self.config(host: "127.0.0.1", passwordFile: try Self.passwordFile(mode: 0o600))
        )
        #expect(await agent.runner.waitForOutput(containing: "sensor", timeout: 20))
        agent.runner.terminate()
        _ = await agent.runner.waitForExit(timeout: 15)
        #expect(
            !agent.runner.standardError.contains("in clear"),
            "agent log: \(agent.runner.standardError.suffix(3000))"
        )
    }

    @Test func aPasswordFileEveryUserMayReadStopsTheStartNamingTheFix() async throws {
        let path = try Self.passwordFile(mode: 0o644)
        let agent = try AgentProcess(config: Self.config(host: "127.0.0.1", passwordFile: path))
        let status = await agent.runner.waitForExit(timeout: 20)
        #expect(status == 78, "a configuration error (EX_CONFIG)")
        let log = agent.runner.standardError
        #expect(log.contains("mqtt.password_file"), "agent log: \(log.suffix(3000))")
        #expect(log.contains("is readable by every user of this machine (mode 0644)"))
        #expect(log.contains("chmod 600 \(path)"))
    }
}
