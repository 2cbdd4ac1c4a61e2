/// The control door's limits: command age, rate, size, signature key, and how much it remembers against
/// replays (`control.*` in config.yaml; `ControlPlane.Settings`).
public struct ControlDoorSettings: Sendable {
    /// Commands older than this (by their `timestamp`) are refused, seconds; 0 disables the check.
    public var maxAgeSeconds: Double = 300
    /// Sustained commands per second, and the burst allowed above it.
    public var ratePerSecond: Double = 10
    public var burst: Double = 20
    /// The largest command accepted, bytes (`control.max_payload_bytes`).
    public var maxPayloadBytes: Int = ControlRequest.maximumSize
    /// How many recent command ids are remembered for de-duplication.
    public var rememberedIDs: Int = 1024
    /// The shared key of signed commands (`control.hmac_key_file`, at least 16 bytes); nil accepts
    /// unsigned commands.
    public var hmacKey: [UInt8]? = nil
    /// How many nonces of signed commands are remembered at most (`NonceLedger`).
    public var rememberedNonces: Int = 8192
    /// Signed commands must be stamped within ± this of the device clock, seconds: `maxAgeSeconds`, or
    /// 300 s when the age check is off, since replay protection needs a bounded window.
    public var signatureWindowSeconds: Double { maxAgeSeconds > 0 ? maxAgeSeconds : 300 }
    public init() {}
}
