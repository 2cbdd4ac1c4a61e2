import AgentConfig
import AgentControl
import AgentPorts
import MotionWire

/// The next version of one layer's desired document, as an operator publishes it (`fleet set|unset|clear`, the
/// console's edits): built on the newest retained document that verifies as what the devices would apply, one
/// version above it — or, with `replace`, above every version the devices in scope report — and signed with the
/// operator's key when one is given. Pure: the caller reads the broker and publishes the payload.
package struct DesiredEditPlanner: Sendable {
    /// What to change in the layer's document.
    package enum Change: Sendable, Equatable {
        /// Keys set to values (config.yaml's names) and keys removed.
        case set([String: String], unset: [String])
        /// `{"version": N, "clear": true}`: every device drops the layer.
        case clear
    }

    /// The document to publish and its bytes (a signed envelope when a key was given).
    package struct Edit: Sendable, Equatable {
        package var document: DesiredDocument
        package var payload: [UInt8]
    }

    package var layer: ConfigurationLayer
    package var topic: String
    package var signingKey: OperatorSigningKey?
    /// Start from an empty document above what the devices report instead of the retained one.
    package var replace: Bool
    /// The version to publish, instead of the retained one's + 1.
    package var version: Int?

    /// Versions `replace` keeps free above a version it counts from: a device claiming one closer to the last
    /// would freeze the layer after the operator's next edit (the claim of a compromised device, or a planted
    /// document's), so it is refused instead of counted from.
    package static let headroom = 1 << 20

    package init(
        layer: ConfigurationLayer,
        topic: String,
        signingKey: OperatorSigningKey? = nil,
        replace: Bool = false,
        version: Int? = nil
    ) {
        self.layer = layer
        self.topic = topic
        self.signingKey = signingKey
        self.replace = replace
        self.version = version
    }

    /// The keys a retained document must be signed with to be built upon: the signing key's own and those of a
    /// trusted keys file; nil (unsigned documents) when neither is given.
    package static func verificationKeys(
        signing: OperatorSigningKey?,
        trusted: TrustedKeyFile?
    ) throws -> OperatorKeys? {
        var keys: [(id: String, publicKey: [UInt8])] = signing.map { [($0.id, $0.publicKey)] } ?? []
        if let trusted {
            keys += trusted.keys.filter { key in !keys.contains { $0.id == key.id } }
        }
        guard !keys.isEmpty else { return nil }
        return try OperatorKeys(TrustedKeyFile(keys: keys))
    }

    /// The next document. `retained` is the newest document on the topic that opened with the devices' own
    /// verification (`DesiredDocumentOpener`) and `unreadable` what each node retains that did not (node → why);
    /// `reported` what the devices in scope say they run for this layer (device → version): a status is the
    /// device's own word, so it is checked before it is counted from.
    package func plan(
        _ change: Change,
        retained: DesiredDocument?,
        unreadable: [String: String],
        reported: [String: Int]
    ) throws(DesiredEditError) -> Edit {
        let layerName = "\(layer)"
        let highest = reported.max { ($0.value, $1.key) < ($1.value, $0.key) }
        var current = DesiredDocument(version: 0, settings: ConfigurationOverlay())
        if !replace {
            // What someone else published is built upon only when it verifies: a document planted by anyone who
            // could write the topic is never signed by the operator's next edit.
            if retained == nil, let (node, problem) = unreadable.min(by: { $0.key < $1.key }) {
                throw DesiredEditError(
                    "the document retained on \(topic) at \(node) is not one to build on: \(Printable.text(problem, limit: 600)) — if it was planted, publish a fresh document with --replace (its version is one above the highest the devices report; --document-version N to choose)"
                )
            }
            if let retained { current = retained }
        } else {
            // Nothing verified to count from: start above every version the devices in scope report running, so
            // the fresh document is newer wherever it lands — unless a claim leaves no room above it.
            if let highest, version == nil, highest.value > DesiredDocument.maximumVersion - Self.headroom {
                throw DesiredEditError(
                    "\(Printable.text(highest.key, limit: 64)) reports \(layerName) v\(highest.value), which would leave the layer fewer than \(Self.headroom) edits before its last version (\(DesiredDocument.maximumVersion)): a status can be forged, so it is not counted from — check that device, and pass --document-version N to choose the version"
                )
            }
            current.version = highest?.value ?? 0
        }
        if let version {
            guard version > current.version, version <= DesiredDocument.maximumVersion else {
                throw DesiredEditError(
                    "--document-version \(version) must be above \(current.version) (the retained document's) and at most \(DesiredDocument.maximumVersion)"
                )
            }
            current.version = version - 1
        }
        let next: DesiredDocument
        switch change {
        case .clear:
            next = .clearing(version: current.version + 1)
        case .set(let written, let unset):
            do {
                next = try current.updating(setting: written, unsetting: unset, source: "fleet set")
            } catch {
                throw DesiredEditError("\(error)")
            }
        }
        guard next.version <= DesiredDocument.maximumVersion else {
            throw DesiredEditError(
                "v\(next.version) would lie above the highest version a device accepts (\(DesiredDocument.maximumVersion)): pass --replace --document-version N"
            )
        }
        // A device that runs this version or a newer one would ignore the document as older: say so rather than
        // publish what some devices never apply.
        if version == nil, let ahead = highest, ahead.value >= next.version {
            throw DesiredEditError(
                "\(Printable.text(ahead.key, limit: 64)) runs \(layerName) v\(ahead.value), at or above v\(next.version): it would ignore this document as older — check its status (it can be forged), and pass --replace (with --document-version N) to publish above it"
            )
        }
        let payload = DesiredDocumentOpener.payload(next, layer: layer, topic: topic, key: signingKey)
        return Edit(document: next, payload: payload)
    }
}

/// Why an edit of a desired document cannot be published, with what to do.
package struct DesiredEditError: Error, Sendable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}
