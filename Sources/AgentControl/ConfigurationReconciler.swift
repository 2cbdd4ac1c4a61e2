import AgentConfig
import AgentPipeline
import AgentPorts
import Foundation
import Logging
import MotionWire
import Synchronization

/// The runtime configuration's layers behind the control door — config.yaml, the fleet's, groups' and device's
/// desired documents, command overrides — and what is kept of them in the state directory. Every change
/// computes a candidate, hands its effective configuration to `apply` (the controller, which changes only what
/// differs), and commits only when that succeeded: a document or command the hardware refuses leaves the
/// previous state in force. Only ControlPlane calls it, inside its door, so changes never interleave.
package final class ConfigurationReconciler: Sendable {
    private struct State {
        var layers: ConfigurationLayers {
            didSet { account = nil }
        }
        /// `layers`' account of every setting and desired version, made at the first status after a change: a
        /// status is composed at every connection, command and fault, the layers change far less often.
        var account: (settings: [String: ConfigurationStatus.Setting], desired: [String: Int])?
        /// `layers` resolved: what the agent runs, read by the controller at every change and status.
        var effective: AgentConfiguration
        var refused: ConfigurationStatus.Refusal?
        var ignored: ConfigurationStatus.Refusal?
        /// Per layer, the version of its last refused document since one was applied (the status carries only
        /// the last refusal of all).
        var refusedVersions: [ConfigurationLayer: Int] = [:]
    }

    /// What became of a desired document.
    package enum DocumentOutcome: Sendable, Equatable {
        case applied(version: Int?, supersededCommands: [String])
        case unchanged
        case stale(version: Int, inForce: Int)
        case refused(String)
    }

    private let state: Mutex<State>
    private let store: DesiredStateStore?
    /// Opens received and kept documents (verifying them when signing is on).
    private let opener: DesiredDocumentOpener
    /// Each layer's topic, for opening what the state directory kept.
    private let topics: [ConfigurationLayer: String]
    private let logger: Logger

    /// Builds the layers from config.yaml and what the state directory kept (`store`, nil when
    /// `control.persist` is off), migrating round one's `streams.json` once. Problems with kept files are
    /// logged; the agent starts with what is usable.
    package init(
        base: AgentConfiguration,
        store: DesiredStateStore?,
        opener: DesiredDocumentOpener = DesiredDocumentOpener(keys: nil),
        topics: [ConfigurationLayer: String] = [:],
        now: Double,
        logger: Logger
    ) {
        self.store = store
        self.opener = opener
        self.topics = topics
        self.logger = logger
        var layers = ConfigurationLayers(base: base)
        if let store {
            let kept = store.load(layers: layers.order) { payload, layer in
                opener.open(payload, layer: layer, topic: topics[layer] ?? "\(layer)").mapError { $0 as any Error }
            }
            for problem in kept.problems { logger.error("\(problem)") }
            layers = ConfigurationLayers(base: base, documents: kept.documents, overrides: kept.overrides)
            if let (legacy, problems) = store.migrateLegacyStreams(base: base) {
                for problem in problems { logger.warning("\(problem)") }
                do {
                    try layers.command(legacy, id: "streams.json", time: now, source: "streams.json")
                    logger.notice(
                        "migrated round one's streams.json: \(legacy.keyPaths.count) setting(s) that differ from config.yaml are now command overrides (\(legacy.keyPaths.joined(separator: ", "))); every other key follows config.yaml and the desired layers"
                    )
                } catch {
                    logger.error("streams.json could not be migrated (\(error)): its settings are dropped")
                }
                Self.save(overrides: layers.overrides, to: store, logger: logger)
            }
        }
        state = Mutex(State(layers: layers, effective: layers.resolve().configuration))
        let applied = layers.order.compactMap { layer in layers.documents[layer].map { "\(layer) v\($0.version)" } }
        if !applied.isEmpty || !layers.overrides.isEmpty {
            logger.info(
                "desired state kept from the last run: \(applied.isEmpty ? "no documents" : applied.joined(separator: ", ")); \(layers.overrides.count) command override(s)"
            )
        }
    }

    /// The layers with a desired document in force, and its version.
    package var documentVersions: [ConfigurationLayer: Int] {
        state.withLock { $0.layers.documents.mapValues(\.version) }
    }

    /// The configuration to run: config.yaml with every layer on top.
    package var effective: AgentConfiguration { state.withLock { $0.effective } }

    /// A command's settings (checked by the config schema when the command was parsed), on top of every layer.
    /// Throws, changing nothing, when the layers or `apply` refuse the result.
    package func command(
        _ settings: ConfigurationOverlay,
        id: String,
        time: Double,
        apply: (AgentConfiguration) throws -> Void
    ) throws {
        let source = "command \(id)"
        try change { layers in
            do {
                try layers.command(settings, id: id, time: time, source: source)
            } catch {
                throw ControlFailure(.conflict, "\(error)")
            }
        } apply: { layers, effective in
            try apply(effective)
            if let store { Self.save(overrides: layers.overrides, to: store, logger: logger) }
        }
    }

    /// config.yaml as read again (SIGHUP, reload-config). Returns the command overrides it superseded.
    package func reload(_ base: AgentConfiguration, apply: (AgentConfiguration) throws -> Void) throws -> [String] {
        var superseded: [String] = []
        try change { layers in
            do {
                superseded = try layers.replaceBase(base, source: "config.yaml")
            } catch {
                throw ControlFailure(.conflict, "\(error)")
            }
        } apply: { layers, effective in
            try apply(effective)
            if let store, !superseded.isEmpty { Self.save(overrides: layers.overrides, to: store, logger: logger) }
        }
        return superseded
    }

    /// A layer's retained document as it arrived, opened (and verified when signing is on) by the reconciler's
    /// opener. An empty payload is not a clear — a broker that retains nothing for a topic says nothing about the layer
    /// (a cluster node may simply never have had the document) — so it changes nothing; a clear is a document
    /// (`{"version": N, "clear": true}`). Refusals are logged and kept for the status.
    package func receive(
        _ payload: [UInt8],
        for layer: ConfigurationLayer,
        topic: String,
        now: Double,
        apply: (AgentConfiguration) throws -> Void
    ) -> DocumentOutcome {
        guard !payload.isEmpty else {
            logger.warning(
                "an empty retained payload on \(topic) leaves the \(layer) layer as it is: a layer is cleared only by a document that says so — publish {\"version\": N, \"clear\": true} with a version above the one in force (motion-agent fleet clear)"
            )
            return .unchanged
        }
        let document: DesiredDocument
        switch opener.open(payload, layer: layer, topic: topic) {
        case .success(let opened): document = opened
        case .failure(let refusal):
            return refuse(layer, version: refusal.version, refusal.reason, topic: topic, now: now)
        }
        var outcome = DocumentOutcome.unchanged
        do {
            try change { layers in
                switch layers.receive(document, for: layer, source: topic) {
                case .applied(let superseded):
                    outcome = .applied(version: document.version, supersededCommands: superseded)
                case .unchanged:
                    outcome = .unchanged
                case .stale(let inForce):
                    outcome = .stale(version: document.version, inForce: inForce)
                case .refused(let error):
                    throw ControlFailure(.conflict, "\(error)")
                }
            } apply: { layers, effective in
                guard case .applied(_, let superseded) = outcome else { return }
                try apply(effective)
                if let store {
                    do {
                        try store.save(payload, for: layer)
                    } catch {
                        logger.error(
                            "cannot keep \(layer)'s desired document in \(store.directory): \(error) — it applies now, but a restart without the broker falls back to the previous one; make agent.state_dir writable"
                        )
                    }
                    if !superseded.isEmpty { Self.save(overrides: layers.overrides, to: store, logger: logger) }
                }
            }
        } catch let failure as ControlFailure {
            return refuse(layer, version: document.version, failure.message, topic: topic, now: now)
        } catch {
            return refuse(layer, version: document.version, "\(error)", topic: topic, now: now)
        }
        switch outcome {
        case .applied(let version, let superseded):
            state.withLock { _ = $0.refusedVersions.removeValue(forKey: layer) }
            let what = version.map { document.clear ? "cleared by v\($0)" : "v\($0) applied" } ?? "applied"
            let supersedes =
                superseded.isEmpty
                ? "" : "; it supersedes the command overrides of \(superseded.joined(separator: ", "))"
            logger.notice("\(layer) desired state \(what) from \(topic)\(supersedes)")
        case .stale(let version, let inForce):
            let reason = "v\(version) is older than v\(inForce) in force: ignored (publish a version above \(inForce))"
            logger.warning("\(layer) desired state from \(topic): \(reason)")
            state.withLock {
                $0.ignored = ConfigurationStatus.Refusal(layer: "\(layer)", version: version, reason: reason, time: now)
            }
        case .unchanged, .refused:
            break
        }
        return outcome
    }

    /// The status document's account of the configuration; `notes` adds what the hardware made of a value.
    package func status(notes: [String: String] = [:]) -> ConfigurationStatus {
        state.withLock { s in
            let account = s.account ?? Self.account(of: s.layers)
            s.account = account
            var settings = account.settings
            for (keyPath, note) in notes where settings[keyPath] != nil { settings[keyPath]?.note = note }
            return ConfigurationStatus(
                groups: s.layers.base.control.groups,
                desired: account.desired,
                refused: s.refused,
                ignored: s.ignored,
                settings: settings
            )
        }
    }

    private static func account(
        of layers: ConfigurationLayers
    ) -> (settings: [String: ConfigurationStatus.Setting], desired: [String: Int]) {
        var settings: [String: ConfigurationStatus.Setting] = [:]
        for entry in layers.resolve().entries {
            settings[entry.keyPath] = ConfigurationStatus.Setting(value: entry.value, source: "\(entry.source)")
        }
        var desired: [String: Int] = [:]
        for layer in layers.order {
            if let document = layers.documents[layer] { desired["\(layer)"] = document.version }
        }
        return (settings, desired)
    }

    /// Per layer, the version of the last document refused since the layer last applied one.
    package var refusedVersions: [ConfigurationLayer: Int] { state.withLock { $0.refusedVersions } }

    /// config.yaml as last read.
    package var base: AgentConfiguration { state.withLock { $0.layers.base } }

    private func change(
        _ edit: (inout ConfigurationLayers) throws -> Void,
        apply: (ConfigurationLayers, AgentConfiguration) throws -> Void
    ) throws {
        var candidate = state.withLock { $0.layers }
        try edit(&candidate)
        let effective = candidate.resolve().configuration
        try apply(candidate, effective)
        state.withLock {
            $0.layers = candidate
            $0.effective = effective
        }
    }

    private func refuse(
        _ layer: ConfigurationLayer,
        version: Int?,
        _ reason: String,
        topic: String,
        now: Double
    ) -> DocumentOutcome {
        logger.error("\(layer) desired state from \(topic) refused, the previous state stays in force: \(reason)")
        state.withLock {
            $0.refused = ConfigurationStatus.Refusal(layer: "\(layer)", version: version, reason: reason, time: now)
            if let version { $0.refusedVersions[layer] = version }
        }
        return .refused(reason)
    }

    private static func save(overrides: [String: RuntimeOverride], to store: DesiredStateStore, logger: Logger) {
        do {
            try store.save(overrides: overrides)
        } catch {
            logger.error(
                "cannot keep the command overrides in \(store.directory): \(error) — they apply now but not after a restart; make agent.state_dir writable"
            )
        }
    }
}
