import AgentConfig
import Crypto
import Foundation

/// An operator's private signing key (Ed25519), as `motion-agent keys generate` writes it:
///
///     # motion-agent operator signing key — keep it secret: whoever holds it steers every device that trusts it
///     motion-agent-ed25519-private-key <key id> <base64 of the 32-byte private key>
///
/// Operators' tools sign with it (`ctl --signing-key`, `fleet set --signing-key`); devices never hold one. The counter that
/// orders an operator's commands is kept beside it, in `<file>.counter`.
package struct OperatorSigningKey: Sendable {
    package let id: String
    /// The raw 32-byte private key.
    private let raw: [UInt8]
    /// Made once: making it from `raw` derives the public key, a scalar multiplication as costly as a signature,
    /// which every signature paid again.
    private let key: PrivateKeyBox

    package init(id: String, privateKey raw: [UInt8]) throws(SigningKeyError) {
        if let problem = TrustedKeyFile.idProblem(id) { throw SigningKeyError("the key id \(id) \(problem)") }
        guard raw.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw) else {
            throw SigningKeyError("the private key is not 32 bytes of an Ed25519 key")
        }
        self.id = id
        self.raw = raw
        self.key = PrivateKeyBox(key: key)
    }

    /// A new key with a fresh random private key.
    package static func generate(id: String) throws(SigningKeyError) -> OperatorSigningKey {
        try OperatorSigningKey(id: id, privateKey: Array(Curve25519.Signing.PrivateKey().rawRepresentation))
    }

    /// The same key under another id.
    package func named(_ id: String) throws(SigningKeyError) -> OperatorSigningKey {
        try OperatorSigningKey(id: id, privateKey: raw)
    }

    package var publicKey: [UInt8] {
        Array(key.key.publicKey.rawRepresentation)
    }

    /// The line of the devices' trusted keys file for this key.
    package var trustLine: String { TrustedKeyFile.line(id: id, publicKey: publicKey) }

    /// The Ed25519 signature of `message` (64 bytes).
    package func signature(of message: [UInt8]) -> [UInt8] {
        Array((try? key.key.signature(for: message)) ?? Data())
    }

    static let marker = "motion-agent-ed25519-private-key"

    /// The file's text.
    package var fileText: String {
        "# motion-agent operator signing key — keep it secret: whoever holds it steers every device that trusts it\n"
            + "\(Self.marker) \(id) \(Base64.encode(raw))\n"
    }

    /// Reads a key file's text.
    package static func parse(_ text: String) throws(SigningKeyError) -> OperatorSigningKey {
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let words = line.split(separator: " ").map(String.init)
            guard words.count == 3, words[0] == marker, let key = Base64.decode(words[2]) else {
                throw SigningKeyError("is not a motion-agent signing key (\"\(marker) <key id> <base64>\")")
            }
            return try OperatorSigningKey(id: words[1], privateKey: key)
        }
        throw SigningKeyError("holds no key")
    }
}

package struct SigningKeyError: Error, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// swift-crypto does not mark the key `Sendable`, though it is an immutable value (the seed and the public key
/// derived from it, set once in its initialiser): shared read-only between threads here.
private struct PrivateKeyBox: @unchecked Sendable {
    let key: Curve25519.Signing.PrivateKey
}
