import AgentConfig
import AgentControl
import MotionWire

/// Operator keys for the control tests: a fixed signing key (so failures reproduce), the trust a device built
/// from it has, and signed commands as `motion-agent ctl --signing-key` makes them.
enum TestOperator {
    static let key = try! OperatorSigningKey(id: "ops-1", privateKey: Array(1...32))
    static let otherKey = try! OperatorSigningKey(id: "ops-2", privateKey: Array(33...64))
    /// A key the devices do not trust, under a trusted key's id.
    static let impostor = try! OperatorSigningKey(id: "ops-1", privateKey: Array(65...96))

    /// What a device with `keys` in its trusted keys file accepts.
    static func trust(_ keys: [OperatorSigningKey] = [key]) -> OperatorKeys {
        try! OperatorKeys(TrustedKeyFile(keys: keys.map { ($0.id, $0.publicKey) }))
    }

    /// A command object's members (`id`, `command`, then the arguments).
    static func command(
        _ id: String,
        _ name: String,
        _ arguments: [(String, StrictJSON.Value)] = [],
        timestamp: Double? = nil
    ) -> [(key: String, value: StrictJSON.Value)] {
        var members: [(key: String, value: StrictJSON.Value)] = [("id", .string(id)), ("command", .string(name))]
        if let timestamp { members.append(("timestamp", .number(String(timestamp)))) }
        return members + arguments.map { (key: $0.0, value: $0.1) }
    }

    /// The envelope of `command`, signed for `target` with `counter`.
    static func signed(
        _ command: [(key: String, value: StrictJSON.Value)],
        target: String = "motion/dev1/control",
        counter: Int,
        with signer: OperatorSigningKey = key
    ) -> [UInt8] {
        SignedEnvelope.seal(
            [("target", .string(target)), ("counter", .number(String(counter)))] + command,
            with: signer
        )
    }
}
