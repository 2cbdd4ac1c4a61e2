import AgentPipeline
import Crypto
import Foundation
import MotionWire

/// Signed commands, for brokers the operator does not fully trust (`control.hmac_key_file`).
///
/// The envelope carries the signature outside the signed bytes, so nothing depends on how JSON is written:
///
///     {"signed": "<base64 of the command's JSON bytes>", "signature": "<64 lowercase hex digits>"}
///
/// `signature` is HMAC-SHA256 (RFC 2104, FIPS 180-4) with the shared key over exactly the bytes that `signed`
/// decodes to. Those bytes are an ordinary command object that must also carry `"timestamp"` (Unix seconds,
/// a number) and `"nonce"` (a string of 8–128 bytes, unique per command, e.g. 16 random bytes in hex); the
/// control plane refuses timestamps outside its window and nonces it has already seen (`NonceLedger`).
/// docs/control.md documents the envelope for other signers.
public struct CommandSignature: Sendable {
    /// A signed command whose signature checked out: the command's bytes and the fields that guard replays.
    public struct Opened: Sendable, Equatable {
        public var command: [UInt8]
        public var id: String?
        public var timestamp: Double
        public var nonce: String
    }

    /// The shortest key accepted, bytes: HMAC-SHA256 keys below 16 bytes (128 bits) are guessable, the same
    /// bound `control.hmac_key_file` enforces.
    public static let minimumKeyBytes = 16
    public static let nonceBytes = 8...128

    /// The raw key; swift-crypto's `SymmetricKey` is not `Sendable`, so one is made per use (commands are
    /// rate-limited, and making one copies a few dozen bytes).
    private let keyBytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    public init(key: [UInt8]) {
        precondition(key.count >= Self.minimumKeyBytes, "an HMAC key needs at least \(Self.minimumKeyBytes) bytes")
        keyBytes = key
    }

    /// The lowercase hex HMAC-SHA256 of `bytes`.
    public func signature(of bytes: [UInt8]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: bytes, using: key)
        return mac.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The envelope for a command's JSON bytes (which must already carry `timestamp` and `nonce`).
    public func envelope(for command: [UInt8]) -> [UInt8] {
        let object = ["signed": Data(command).base64EncodedString(), "signature": signature(of: command)]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return Array(data)
    }

    /// The bytes a signed envelope carries, once its signature checks out: what `open` builds on for commands,
    /// and all a retained desired document needs (its version, not a nonce, orders it). `what` names the
    /// payload in refusals.
    public func verify(_ payload: [UInt8], maximumSize: Int, what: String) -> Result<[UInt8], ControlFailure> {
        guard payload.count <= maximumSize else {
            return .failure(
                ControlFailure(
                    .tooLarge,
                    "\(what) is \(payload.count) bytes; at most \(maximumSize) are accepted"
                )
            )
        }
        guard let outer = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
            return .failure(
                ControlFailure(
                    .malformed,
                    "\(what) is not a JSON object — send a signed envelope {\"signed\": \"<base64 command>\", \"signature\": \"<hex HMAC-SHA256>\"}"
                )
            )
        }
        let claimedID = outer["id"] as? String
        guard let signed = outer["signed"] as? String, let signatureText = outer["signature"] as? String else {
            return .failure(
                Self.unauthorized(
                    claimedID,
                    "\(what) is not signed: this device accepts only signed envelopes {\"signed\": \"<base64 command>\", \"signature\": \"<hex HMAC-SHA256>\"} — sign it with the fleet's key (motion-agent ctl --hmac-key-file FILE for commands, motion-agent fleet set --hmac-key-file FILE for desired documents)"
                )
            )
        }
        guard outer.count == 2 else {
            return .failure(
                Self.unauthorized(
                    claimedID,
                    "a signed envelope has exactly the keys \"signed\" and \"signature\"; anything beside them is unsigned and refused"
                )
            )
        }
        guard let command = Data(base64Encoded: signed).map(Array.init) else {
            return .failure(
                Self.unauthorized(nil, "\"signed\" is not base64 — it must be the base64 of the command's JSON bytes")
            )
        }
        let peek = Self.peek(command)
        guard let mac = Self.bytes(hex: signatureText), mac.count == SHA256.byteCount else {
            return .failure(
                Self.unauthorized(
                    peek?.id,
                    "\"signature\" must be 64 lowercase hex digits: HMAC-SHA256 of the signed bytes"
                )
            )
        }
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: command, using: key) else {
            return .failure(
                Self.unauthorized(
                    peek?.id,
                    "the signature does not match: \(what) was altered or signed with another key — sign it with the key in control.hmac_key_file"
                )
            )
        }
        return .success(command)
    }

    /// Checks an envelope: malformed when the payload is not a JSON object at all, unauthorized when it is unsigned, the
    /// signature does not match (tampered, or another key), or the signed command lacks its timestamp or nonce.
    /// The comparison of MACs takes constant time (swift-crypto's `isValidAuthenticationCode`).
    public func open(_ payload: [UInt8], maximumSize: Int) -> Result<Opened, ControlFailure> {
        let command: [UInt8]
        switch verify(payload, maximumSize: maximumSize, what: "the command") {
        case .failure(let failure): return .failure(failure)
        case .success(let verified): command = verified
        }
        let peek = Self.peek(command)
        guard let fields = peek else {
            return .failure(
                ControlFailure(
                    .malformed,
                    "the signed bytes are not a JSON object — sign a command like {\"id\": \"1\", \"command\": \"status\", \"timestamp\": 1763700000, \"nonce\": \"9f2c…\"}"
                )
            )
        }
        guard let timestamp = fields.timestamp, timestamp.isFinite else {
            return .failure(
                Self.unauthorized(fields.id, "a signed command needs \"timestamp\": Unix seconds as a number")
            )
        }
        guard let nonce = fields.nonce, Self.nonceBytes.contains(nonce.utf8.count) else {
            return .failure(
                Self.unauthorized(
                    fields.id,
                    "a signed command needs \"nonce\": a string of \(Self.nonceBytes.lowerBound)–\(Self.nonceBytes.upperBound) bytes never used before, e.g. 16 random bytes in hex"
                )
            )
        }
        return .success(Opened(command: command, id: Self.echoable(fields.id), timestamp: timestamp, nonce: nonce))
    }

    private static func unauthorized(_ id: String?, _ message: String) -> ControlFailure {
        ControlFailure(.unauthorized, id: echoable(id), message)
    }

    /// An unverified id is echoed in the reply only when it is a valid id (at most 128 bytes), so a refusal
    /// never carries more than a command would.
    private static func echoable(_ id: String?) -> String? {
        id.flatMap { $0.utf8.count <= 128 ? $0 : nil }
    }

    /// The replay-guarding fields of a command, typed; nil when the bytes are not a JSON object. A field of
    /// the wrong type reads as missing.
    private struct Fields: Decodable {
        var id: String?
        var timestamp: Double?
        var nonce: String?

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try? c.decodeIfPresent(String.self, forKey: .id)
            timestamp = try? c.decodeIfPresent(Double.self, forKey: .timestamp)
            nonce = try? c.decodeIfPresent(String.self, forKey: .nonce)
        }

        enum CodingKeys: String, CodingKey { case id, timestamp, nonce }
    }

    private static func peek(_ command: [UInt8]) -> Fields? {
        try? JSONDecoder().decode(Fields.self, from: Data(command))
    }

    /// Lowercase hex only, so every MAC has exactly one spelling.
    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ d: UInt8) -> UInt8? {
            switch d {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let high = value(digits[i]), let low = value(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }
}
