import AgentConfig
import Crypto
import MotionWire

/// The operators' Ed25519 public keys a device trusts (`control.trusted_keys_file`), by key id: what checks
/// every signed command and desired document. A device holds only these — it can verify, never sign — so a
/// compromised device cannot steer another one.
package struct OperatorKeys: Sendable {
    /// Key id → raw 32-byte public key. (swift-crypto's key types are not `Sendable`; one is made per check.)
    private let keys: [String: [UInt8]]

    /// The ids, in the file's order.
    package let ids: [String]

    /// Throws when a key is not a valid Ed25519 public key.
    package init(_ file: TrustedKeyFile) throws {
        var keys: [String: [UInt8]] = [:]
        for (id, raw) in file.keys {
            _ = try Curve25519.Signing.PublicKey(rawRepresentation: raw)
            keys[id] = raw
        }
        self.keys = keys
        ids = file.keys.map(\.id)
    }

    package func contains(_ id: String) -> Bool { keys[id] != nil }

    /// Whether `signature` is `id`'s Ed25519 signature of `message` (RFC 8032). False for an unknown id.
    package func isValid(signature: [UInt8], of message: [UInt8], by id: String) -> Bool {
        guard let raw = keys[id], let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else {
            return false
        }
        return key.isValidSignature(signature, for: message)
    }
}
