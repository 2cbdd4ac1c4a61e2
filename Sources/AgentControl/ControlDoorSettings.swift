import AgentPorts

/// The control door's limits: command age, rate, size, the operators' keys, and what it remembers against
/// replays (`control.*` in config.yaml; `ControlPlane.Settings`).
public struct ControlDoorSettings: Sendable {
    /// Commands older than this (by their `timestamp`) are refused, seconds; 0 disables the check.
    public var maxAgeSeconds: Double = 300
    /// Sustained commands per second, and the burst allowed above it. With signing on, only verified commands
    /// draw on it: unsigned junk cannot use up the operators' budget.
    public var ratePerSecond: Double = 10
    public var burst: Double = 20
    /// Refusals of what could not be verified (unsigned, tampered, too large, not JSON) are answered at most this
    /// often, so a flood of junk is not answered by a flood of replies; the rest are counted and logged.
    public var refusalsPerSecond: Double = 2
    public var refusalBurst: Double = 5
    /// The largest command accepted, bytes (`control.max_payload_bytes`).
    public var maxPayloadBytes: Int = ControlRequest.maximumSize
    /// How many recent command ids are remembered for de-duplication.
    public var rememberedIDs: Int = 1024
    /// The operators' public keys (`control.trusted_keys_file`); nil accepts unsigned commands.
    public var keys: OperatorKeys? = nil
    /// Where the signed commands' counters are kept across restarts (`StateFile.commandCounters`); nil keeps them
    /// in memory only (`control.persist: false`).
    public var counterStore: (any StateDirectory)? = nil
    /// Signed commands older than this are replays for a device without a kept counter for their key, seconds:
    /// `maxAgeSeconds`, or 300 s when the age check is off.
    public var signatureWindowSeconds: Double { maxAgeSeconds > 0 ? maxAgeSeconds : 300 }
    public init() {}
}
