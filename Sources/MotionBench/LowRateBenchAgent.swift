import AgentPorts
import Foundation
import Harness

/// One of many agents the fleet benches start: simulated IMU at 25 Hz, only the accelerometer at 1 Hz, metrics
/// off, its own state directory — the measure is the control and connection path, not the data path.
enum LowRateBenchAgent {
    /// Writes the agent's config.yaml under `directory/device` (with `mqtt` and `extra` as YAML lines, indented
    /// by the caller as config.yaml needs) and starts `agent` on it.
    static func start(
        _ device: String,
        agent: String,
        under directory: String,
        mqtt: [String],
        extra: String = ""
    ) throws -> AgentProcess {
        let state = directory + "/" + device
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let streams = BenchAgentConfiguration.streamLines([.accelerometer: "{enabled: true, rate_hz: 1}"])
            .joined(separator: "\n")
        let config = """
            device:
              id: \(device)
            agent:
              state_dir: \(state)
              log_level: warning
            source:
              kind: simulated
              simulated: {scenario: stationary, seed: 1, rate_hz: 25}
            mqtt:
            \(mqtt.map { "  " + $0 }.joined(separator: "\n"))
            \(extra)
            streams:
            \(streams)
            metrics:
              interval_s: 0
            """
        let path = state + "/config.yaml"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        return try AgentProcess(agent: agent, configPath: path)
    }
}
