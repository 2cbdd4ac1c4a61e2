import AgentPorts

/// `sparkplug`: the agent as a Sparkplug B 3.0 edge node (docs/sparkplug.md) beside its native topics. Off by
/// default. The edge node id is `device.id`; each stream listed is a Sparkplug device.
package struct SparkplugSettings: Sendable, Equatable {
    /// Publish Sparkplug B. Default false.
    package var enabled: Bool = false
    /// The Sparkplug group (a topic level). Default `motion`.
    package var groupID: String = "motion"
    /// A host application's id: publish only while its STATE says online. Default none.
    package var primaryHostID: String? = nil
    /// The streams carried, each a device. Default the slow streams and device motion.
    package var streams: [String] = ["device-motion", "pedometer", "activity", "altimeter"]
    /// Let hosts write `config/enabled` and `config/rateHz` (NCMD/DCMD). Default false; refused while commands
    /// must be signed (`control.trusted_keys_file`), since a Sparkplug command carries no signature.
    package var writes: Bool = false
    /// The Sparkplug connection's MQTT user name; nil: `mqtt.username`. A broker that binds client ids to
    /// accounts (mosquitto's `use_username_as_clientid`, the shipped one) needs an account of its own here, or the
    /// two connections would take each other's place.
    package var username: String? = nil
    /// The first line of this file is the Sparkplug account's password; nil: the native connection's password.
    package var passwordFile: String? = nil

    package init() {}

    /// Why `id` cannot be a Sparkplug id (a topic level: not empty, no `+ / #`, no control characters, at most
    /// 256 bytes — Sparkplug 3.0, 4.1.2–4.1.5), nil when it can.
    static func identifierProblem(_ id: String) -> FieldProblem? {
        if id.isEmpty { return FieldProblem(kind: .invalidValue, problem: "is empty") }
        if id.utf8.count > 256 { return FieldProblem(kind: .invalidValue, problem: "is longer than 256 bytes") }
        if let bad = id.unicodeScalars.first(where: { "+/#".unicodeScalars.contains($0) }) {
            return FieldProblem(kind: .invalidValue, problem: "contains '\(bad)', a topic separator or wildcard")
        }
        if id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return FieldProblem(kind: .invalidValue, problem: "contains a control character")
        }
        return nil
    }

    /// The streams Sparkplug can carry: every stream of the table.
    static var streamNames: [String] { StreamDescriptor.table.map(\.name.rawValue) }
}
