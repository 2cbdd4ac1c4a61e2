import AgentConfig
import MotionWire

/// The signed envelope of commands and desired documents (docs/security.md):
///
///     {"key": "<key id>", "signature": "<base64 Ed25519 signature>", "signed": "<base64 of the signed bytes>"}
///
/// The signature (RFC 8032) covers exactly the bytes `signed` decodes to, so nothing depends on how JSON is
/// written. Those bytes are a JSON object that names where it may apply — `"target"`, the topic it is published
/// to — and, for a desired document, `"layer"`; a command also carries `"counter"`, the signer's increasing
/// number that makes a replay detectable across restarts (`CounterLedger`). A signed object published on another
/// topic than its target is refused: commands and documents cannot be moved between devices, groups and layers.
package enum SignedEnvelope {
    /// A verified envelope's content.
    package struct Opened: Sendable {
        /// The key that signed it.
        package var keyID: String
        /// The signed object's members, `target` and `layer` taken out.
        package var members: [(key: String, value: StrictJSON.Value)]
    }

    /// The envelope around `object` (which must carry its `target`, and `counter` or `layer` as its kind needs),
    /// signed with `key`.
    package static func seal(
        _ object: [(key: String, value: StrictJSON.Value)],
        with key: OperatorSigningKey
    ) -> [UInt8] {
        let signed = StrictJSON.Value.object(object).encoded()
        let envelope: StrictJSON.Value = .object([
            ("key", .string(key.id)),
            ("signature", .string(Base64.encode(key.signature(of: signed)))),
            ("signed", .string(Base64.encode(signed))),
        ])
        return envelope.encoded()
    }

    /// Checks an envelope that arrived on `topic`: its size, its form, a trusted key, the signature over the signed
    /// bytes, the signed object (strictly parsed within `limits`) and its target (and `layer`, when given). Every
    /// refusal is `.unauthorized` but for a payload too large (`.tooLarge`), with a sentence naming the fix;
    /// `what` names the payload in them ("the command", "the desired document").
    package static func open(
        _ payload: [UInt8],
        topic: String,
        layer: String? = nil,
        keys: OperatorKeys,
        maximumSize: Int,
        limits: StrictJSON.Limits,
        what: String
    ) -> Result<Opened, ControlFailure> {
        guard payload.count <= maximumSize else {
            return .failure(
                ControlFailure(.tooLarge, "\(what) is \(payload.count) bytes; at most \(maximumSize) are accepted")
            )
        }
        let form =
            "\(what) is not signed: this device accepts only envelopes {\"key\": \"<key id>\", \"signature\": "
            + "\"<base64 Ed25519>\", \"signed\": \"<base64 JSON>\"} signed by an operator key it trusts — sign with "
            + "motion-agent ctl --signing-key FILE (commands) or motion-agent fleet set --signing-key FILE (documents)"
        guard case .object(let outer)? = try? StrictJSON.parse(payload, limits: .command) else {
            return .failure(ControlFailure(.unauthorized, form))
        }
        let claimedID = outer.first { $0.key == "id" }?.value.string.flatMap(echoable)
        guard outer.count == 3, let keyID = outer.first(where: { $0.key == "key" })?.value.string,
            let signatureText = outer.first(where: { $0.key == "signature" })?.value.string,
            let signedText = outer.first(where: { $0.key == "signed" })?.value.string
        else {
            return .failure(ControlFailure(.unauthorized, id: claimedID, form))
        }
        // The id inside is unverified, but echoing it (printable, bounded) lets the sender match the refusal to
        // what it sent.
        func unverifiedID() -> String? {
            Base64.decode(signedText).flatMap { try? StrictJSON.parse($0, limits: limits) }?["id"]?.string
                .flatMap(echoable)
        }
        guard keys.contains(keyID) else {
            return .failure(
                ControlFailure(
                    .unauthorized,
                    id: unverifiedID(),
                    "\(what) is signed with the key \"\(Printable.text(keyID, limit: 64))\", which this device does not trust — sign with a key listed in control.trusted_keys_file (\(keys.ids.joined(separator: ", ")))"
                )
            )
        }
        guard let signature = Base64.decode(signatureText), signature.count == 64 else {
            return .failure(
                ControlFailure(.unauthorized, "\"signature\" is not the base64 of a 64-byte Ed25519 signature")
            )
        }
        guard let signed = Base64.decode(signedText) else {
            return .failure(ControlFailure(.unauthorized, "\"signed\" is not base64"))
        }
        guard keys.isValid(signature: signature, of: signed, by: keyID) else {
            return .failure(
                ControlFailure(
                    .unauthorized,
                    id: unverifiedID(),
                    "the signature does not match: \(what) was altered or signed with another key than \"\(keyID)\""
                )
            )
        }
        let object: [(key: String, value: StrictJSON.Value)]
        do {
            guard case .object(let members) = try StrictJSON.parse(signed, limits: limits) else {
                return .failure(ControlFailure(.malformed, "the signed bytes are not a JSON object"))
            }
            object = members
        } catch {
            return .failure(ControlFailure(.malformed, "the signed bytes are not valid JSON: they \(error)"))
        }
        let id = object.first { $0.key == "id" }?.value.string.flatMap(echoable)
        guard let target = object.first(where: { $0.key == "target" })?.value.string else {
            return .failure(
                ControlFailure(
                    .unauthorized,
                    id: id,
                    "the signed object names no \"target\": it must carry the topic it is published to, so it cannot be moved"
                )
            )
        }
        guard target == topic else {
            return .failure(
                ControlFailure(
                    .unauthorized,
                    id: id,
                    "\(what) was signed for \(Printable.text(target, limit: 200)) and arrived on \(topic): a signed command or document applies only to its own topic"
                )
            )
        }
        if let layer {
            let signedLayer = object.first { $0.key == "layer" }?.value.string
            guard signedLayer == layer else {
                return .failure(
                    ControlFailure(
                        .unauthorized,
                        "\(what) was signed for the layer \(signedLayer.map { Printable.text($0, limit: 80) } ?? "(none)") and arrived for the \(layer) layer"
                    )
                )
            }
        }
        return .success(
            Opened(keyID: keyID, members: object.filter { $0.key != "target" && $0.key != "layer" })
        )
    }

    /// What an envelope published on `topic` claims before any verification: its key, the signed object's counter
    /// and (echoable) id. Nil when it is not an envelope of that form or names another target (that refusal says
    /// so, after the signature check). Good only for refusing — nothing in it is verified.
    static func claimedCounter(
        _ payload: [UInt8],
        topic: String,
        limits: StrictJSON.Limits
    ) -> (keyID: String, counter: Int, id: String?)? {
        guard case .object(let outer)? = try? StrictJSON.parse(payload, limits: .command), outer.count == 3,
            let keyID = outer.first(where: { $0.key == "key" })?.value.string,
            let signedText = outer.first(where: { $0.key == "signed" })?.value.string,
            let signed = Base64.decode(signedText),
            case .object(let object)? = try? StrictJSON.parse(signed, limits: limits),
            object.first(where: { $0.key == "target" })?.value.string == topic,
            let counter = object.first(where: { $0.key == "counter" })?.value.integer,
            (1...CounterLedger.maximum).contains(counter)
        else { return nil }
        return (keyID, counter, object.first { $0.key == "id" }?.value.string.flatMap(echoable))
    }

    /// An id from an unverified or refused message is echoed in the reply only when it is a valid id (at most 128
    /// bytes, printable), so a refusal never carries more than a command would.
    static func echoable(_ id: String) -> String? {
        guard id.utf8.count <= 128, Printable.text(id, limit: 128) == id else { return nil }
        return id
    }
}
