import AgentConfig
import AgentControl
import AgentPorts
import AgentSimulation
import Foundation
import MemoryBroker
import MotionWire
import Testing

/// What the control and desired-state scenarios share: the operators' keys, reading a device's retained account,
/// and checking a stream's seq.
enum ControlScenario {
    /// The operators' key: the devices that sign trust its public key.
    static let operatorKey = try! OperatorSigningKey(id: "ops-sim", privateKey: Array(repeating: 7, count: 32))
    /// A key no device trusts.
    static let rogueKey = try! OperatorSigningKey(id: "rogue-1", privateKey: Array(repeating: 9, count: 32))
    /// Another private key under the trusted key's id.
    static let impostorKey = try! OperatorSigningKey(id: "ops-sim", privateKey: Array(repeating: 11, count: 32))

    /// What a device with the operators' key in its trusted keys file accepts.
    static var trust: OperatorKeys {
        try! OperatorKeys(TrustedKeyFile(keys: [(operatorKey.id, operatorKey.publicKey)]))
    }

    /// `configuration.settings[key]` of the device's retained account: its value and source.
    static func setting(_ tool: SimulatedTool, _ device: String, _ key: String) -> (value: String?, source: String?) {
        let entry = tool.configuration(device)?.settings[key]
        return (entry?.value, entry?.source)
    }

    /// Every setting of the device's retained account as "value (source)".
    static func settings(_ tool: SimulatedTool, _ device: String) -> [String: String] {
        (tool.configuration(device)?.settings ?? [:]).mapValues { "\($0.value) (\($0.source))" }
    }

    /// `configuration.desired` of the device's retained status: layer → version.
    static func desired(_ tool: SimulatedTool, _ device: String) -> [String: Int]? {
        tool.status(device)?.configuration?.desired
    }

    /// Runs the world until the device's retained account has `key` = `value`; returns whether it did within
    /// `timeout` simulated seconds.
    static func waitFor(
        _ tool: SimulatedTool,
        _ device: String,
        _ key: String,
        _ value: String,
        timeout: Double = 20
    ) -> Bool {
        tool.waitUntil(timeout: timeout) { setting(tool, device, key).value == value }
    }

    /// Runs the world until the device's process has ended (after `world.terminate`).
    static func waitForExit(_ world: SimulationWorld, _ device: SimulatedAgent, timeout: Double = 15) -> Bool {
        world.run(until: { !device.isRunning }, timeout: timeout)
    }

    /// The starts of `device` the tool saw come online: distinct boot counts among its online statuses (a
    /// command that changes the state republishes the status, online, within the same start).
    static func births(_ tool: SimulatedTool, _ device: String) -> Int {
        Set(
            tool.json(on: "motion/\(device)/status").filter { $0["state"] as? String == "online" }.compactMap {
                $0["bootCount"] as? Int
            }
        ).count
    }

    /// The stream's messages must be the device's own, one seq after the other — but for `restarts` new runs of
    /// the agent, where seq may start over. Returns the problems.
    static func seqProblems(_ messages: [InboundMessage], restarts: Int = 0) -> [String] {
        var problems: [String] = []
        var previous: Int?
        var runs = 0
        for message in messages {
            guard let seq = SimulatedTool.json(message)["seq"] as? Int else {
                problems.append(
                    "a message without a seq: \(String(decoding: message.payload.prefix(120), as: UTF8.self))"
                )
                continue
            }
            if let last = previous, seq != last + 1 {
                if seq <= last && runs < restarts {
                    runs += 1
                } else {
                    problems.append("seq \(seq) after \(last)")
                }
            }
            previous = seq
        }
        return problems
    }

    /// A file of the real file system for `reload-config` to read (the agent's config.yaml), in a fresh
    /// temporary folder.
    static func configurationFile(_ text: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "motion-agent-sim-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("config.yaml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
