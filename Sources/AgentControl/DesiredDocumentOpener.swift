import AgentConfig
import AgentPorts
import MotionWire

/// How the bytes of a desired document — as it arrives on its topic, or as the state directory kept it — become
/// the document: with signing on (`keys`), a signed envelope whose signature, target topic and layer check out
/// (`SignedEnvelope`); with signing off, the document itself. The same path for both, so a kept document is
/// verified again at every start (with the keys trusted then) and never read back as a plain document.
package struct DesiredDocumentOpener: Sendable {
    package let keys: OperatorKeys?

    /// A signed desired document is at most this large, bytes.
    package static let maximumBytes = 64 << 10

    package init(keys: OperatorKeys?) {
        self.keys = keys
    }

    /// The document `payload` carries for `layer` on `topic`, or why it is refused (with its version when
    /// readable).
    package func open(
        _ payload: [UInt8],
        layer: ConfigurationLayer,
        topic: String
    ) -> Result<DesiredDocument, DesiredDocumentRefusal> {
        guard let keys else {
            do {
                return .success(try DesiredDocument.decode(payload, source: topic))
            } catch {
                return .failure(DesiredDocumentRefusal(reason: "\(error)"))
            }
        }
        switch SignedEnvelope.open(
            payload,
            topic: topic,
            layer: "\(layer)",
            keys: keys,
            maximumSize: Self.maximumBytes,
            limits: .desiredDocument,
            what: "the desired document"
        ) {
        case .failure(let failure):
            var reason = failure.message
            if failure.kind == .unauthorized {
                reason +=
                    " (with control.trusted_keys_file set, documents are published by motion-agent fleet set|unset|clear --signing-key FILE)"
            }
            return .failure(DesiredDocumentRefusal(reason: reason))
        case .success(let opened):
            do {
                return .success(try DesiredDocument.decode(members: opened.members, source: topic))
            } catch {
                return .failure(
                    DesiredDocumentRefusal(
                        reason: "\(error)",
                        version: opened.members.first { $0.key == "version" }?.value.integer
                    )
                )
            }
        }
    }

    /// The envelope an operator's tool publishes for `document` on `topic` (signed with `key`), or the document
    /// alone when there is no key.
    package static func payload(
        _ document: DesiredDocument,
        layer: ConfigurationLayer,
        topic: String,
        key: OperatorSigningKey?
    ) -> [UInt8] {
        let bytes = document.encoded()
        guard let key else { return bytes }
        // `encoded()` writes a JSON object: target and layer go first, then its members as written.
        guard case .object(let members)? = try? StrictJSON.parse(bytes, limits: .desiredDocument) else { return bytes }
        return SignedEnvelope.seal([("target", .string(topic)), ("layer", .string("\(layer)"))] + members, with: key)
    }
}

/// Why a desired document was refused, and its version when that could be read.
package struct DesiredDocumentRefusal: Error, Sendable {
    package var reason: String
    package var version: Int?

    package init(reason: String, version: Int? = nil) {
        self.reason = reason
        self.version = version
    }
}

extension DesiredDocumentRefusal: CustomStringConvertible {
    package var description: String { reason }
}
