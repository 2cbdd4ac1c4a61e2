import AgentPorts

/// The control door's limits: command age, rate, size, the operators' keys, and what it remembers against
/// replays (`control.*` in config.yaml; `ControlPlane.Settings`).
package struct ControlDoorSettings: Sendable {
    /// Commands older than this (by their `timestamp`) are refused, seconds; 0 disables the check.
    package var maxAgeSeconds: Double = 300
    /// Sustained commands per second, and the burst allowed above it. With signing on, only verified commands
    /// draw on it: unsigned junk cannot use up the operators' budget.
    package var ratePerSecond: Double = 10
    package var burst: Double = 20
    /// Refusals of what could not be verified (unsigned, tampered, too large, not JSON) are answered at most this
    /// often, so a flood of junk is not answered by a flood of replies; the rest are counted and logged.
    package var refusalsPerSecond: Double = 2
    package var refusalBurst: Double = 5
    /// The largest command accepted, bytes (`control.max_payload_bytes`).
    package var maxPayloadBytes: Int = ControlRequest.maximumSize
    /// How many recent command ids are remembered for de-duplication.
    package var rememberedIDs: Int = 1024
    /// The operators' public keys (`control.trusted_keys_file`); nil accepts unsigned commands.
    package var keys: OperatorKeys? = nil
    /// Where the signed commands' counters are kept across restarts (`StateFile.commandCounters`); nil keeps them
    /// in memory only (`control.persist: false`).
    package var counterStore: (any StateDirectory)? = nil
    /// Signed commands older than this are replays for a device without a kept counter for their key, seconds:
    /// `maxAgeSeconds`, or 300 s when the age check is off.
    package var signatureWindowSeconds: Double { maxAgeSeconds > 0 ? maxAgeSeconds : 300 }
    package init() {}
}
