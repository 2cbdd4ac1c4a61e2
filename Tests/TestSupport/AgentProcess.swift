import AgentPorts
import Foundation
import Harness

/// The real `motion-agent` binary, started with a config file written for one test (the end-to-end and cluster
/// tests).
package final class AgentProcess: Sendable {
    package let runner: ProcessRunner
    package let directory: String
    package let configPath: String

    /// The binary SwiftPM built next to this test bundle.
    package static var executable: String {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("motion-agent").path
    }

    /// Writes `config` (YAML) into a fresh directory (or `directory`, to run again on an earlier run's state)
    /// and starts `motion-agent run --config` on it.
    package init(
        config: String,
        arguments: [String]? = nil,
        environment: [String: String] = [:],
        directory: String? = nil
    ) throws {
        self.directory = directory ?? NSTemporaryDirectory() + "motion-agent-e2e-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
        configPath = self.directory + "/config.yaml"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw MissingBinary(path: Self.executable)
        }
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        runner = ProcessRunner(
            executable: Self.executable,
            arguments: arguments ?? ["run", "--config", configPath],
            environment: env,
            workingDirectory: self.directory
        )
        try runner.start()
    }

    deinit {
        if runner.isRunning { runner.kill() }
    }

    /// A config for the simulated IMU against `port`, with fast reconnects; `extra` is appended verbatim
    /// under the top level (keep its indentation), and `streams` replaces the default streams section.
    package static func config(
        device: String,
        port: Int,
        scenario: String = "stationary",
        simulatedRateHz: Double = 200,
        mqttProtocol: String = "v5",
        streams: String = "",
        extra: String = ""
    ) -> String {
        """
        device:
          id: \(device)
        agent:
          state_dir: state
          log_level: info
        source:
          kind: simulated
          simulated:
            scenario: \(scenario)
            seed: 7
            rate_hz: \(simulatedRateHz)
        mqtt:
          host: 127.0.0.1
          port: \(port)
          protocol: \(mqttProtocol)
          keepalive: 5
          reconnect_min_delay: 0.2
          reconnect_max_delay: 1
        \(streams)
        \(extra)
        """
    }
}

package struct MissingBinary: Error, CustomStringConvertible {
    package var path: String
    package init(path: String) { self.path = path }
    package var description: String { "\(path) is missing: build it first (swift build --build-tests)" }
}

/// A message's payload as a JSON object (empty when it is not one).
package func payloadJSON(_ m: InboundMessage) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any]) ?? [:]
}
