import AgentConfig
import AgentControl
import MotionWire

/// A retained desired document read for display and comparison (`fleet get`, `fleet status`, the console): a
/// signed envelope's signed object without its `target` and `layer`, or the payload itself. Unverified and never
/// applied to anything: what devices apply they verify themselves; what an operator builds on goes through
/// `DesiredEditPlanner`, which verifies.
package enum RetainedDesiredDocument {
    /// The document's members, or nil when the payload is not a JSON object within the document limits.
    package static func members(_ payload: [UInt8]) -> [(key: String, value: StrictJSON.Value)]? {
        guard case .object(let outer)? = try? StrictJSON.parse(payload, limits: .desiredDocument) else { return nil }
        guard outer.count == 3, let signed = outer.first(where: { $0.key == "signed" })?.value.string,
            outer.contains(where: { $0.key == "key" }), let bytes = Base64.decode(signed),
            case .object(let inner)? = try? StrictJSON.parse(bytes, limits: .desiredDocument)
        else { return outer }
        return inner.filter { $0.key != "target" && $0.key != "layer" }
    }

    /// The retained desired document on `topic`, unverified, or nil when it is not a valid document.
    package static func document(_ payload: [UInt8], topic: String) -> DesiredDocument? {
        members(payload).flatMap { try? DesiredDocument.decode(members: $0, source: topic) }
    }

    /// The payload as a document, unverified, or why it is not one.
    package static func read(_ payload: [UInt8], topic: String) -> Result<DesiredDocument, DesiredDocumentRefusal> {
        guard let members = members(payload) else {
            return .failure(DesiredDocumentRefusal(reason: "not a JSON object within the document limits"))
        }
        do {
            return .success(try DesiredDocument.decode(members: members, source: topic))
        } catch {
            return .failure(DesiredDocumentRefusal(reason: "\(error)"))
        }
    }
}
