import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import ArgumentParser
import Foundation
import MotionWire

/// Read-modify-write of one layer's retained document: version + 1, published retained; refused when another
/// document appears on the topic meanwhile; then, with `--wait`, waits for the devices to report it.
struct FleetDocumentEditor {
    var broker: BrokerOptions
    var target: FleetTarget
    var timeout: Double
    var wait: Double
    /// Signs the document (`--signing-key`): what devices with control.trusted_keys_file require.
    var key: String?
    /// Public keys the retained document may be signed with besides `key`'s own (`--trusted-keys`).
    var trustedKeys: String?
    /// Build on nothing: a fresh document (`--replace`), for a retained one that cannot be verified.
    var replace: Bool = false
    /// The version to publish (`--version`); by default the retained one's + 1.
    var version: Int?

    /// Publishes the next version of the layer's document: `written` set and `unset` removed, or (`clearing`)
    /// a clear, which removes the layer on every device, also those away now, when they next connect.
    func edit(setting written: [String: String], unsetting unset: [String], clearing: Bool = false) async throws {
        let topic = target.topic(broker)
        let statusFilter = TopicScheme(template: broker.root, device: "+").status
        let snapshot = try await RetainedSnapshot(
            options: try broker.connectOptions(clientID: "motion-fleet-\(UUID().uuidString.prefix(8))"),
            filters: [topic, statusFilter],
            timeout: timeout
        )
        let signingKey = try key.map { try OperatorKeyFile(path: $0) }
        let opener = DesiredDocumentOpener(keys: try verificationKeys(signingKey))
        var current = DesiredDocument(version: 0, settings: ConfigurationOverlay())
        if let message = snapshot.latest[topic], !message.payload.isEmpty, !replace {
            // What someone else published is built upon only when it verifies as what the devices would apply
            // (signed by a trusted key for this topic and layer, when signing): a document planted by anyone who
            // could write the topic is never signed by the operator's next edit.
            switch opener.open(message.payload, layer: target.layer, topic: topic) {
            case .success(let document): current = document
            case .failure(let refusal):
                await snapshot.close()
                throw ValidationError(
                    "the document retained on \(topic) is not one to build on: \(Printable.text(refusal.reason, limit: 600)) — if it was planted, publish a fresh document with --replace (its version is one above the highest the devices report; --version N to choose)"
                )
            }
        }
        if replace {
            // Nothing verified to count from: start above every version the devices in scope report running, so
            // the fresh document is newer wherever it lands.
            let reported = FleetDeviceStatus.collect(snapshot.latest.values, root: broker.root).filter { inScope($0) }
            current.version = reported.compactMap { $0.desired["\(target.layer)"] }.max() ?? 0
        }
        if let version {
            guard version > current.version, version <= DesiredDocument.maximumVersion else {
                await snapshot.close()
                throw ValidationError(
                    "--version \(version) must be above \(current.version) (the retained document's) and at most \(DesiredDocument.maximumVersion)"
                )
            }
            current.version = version - 1
        }
        let next: DesiredDocument
        do {
            next =
                clearing
                ? .clearing(version: current.version + 1)
                : try current.updating(setting: written, unsetting: unset, source: "fleet set")
        } catch {
            await snapshot.close()
            throw ValidationError("\(error)")
        }
        let payload = DesiredDocumentOpener.payload(next, layer: target.layer, topic: topic, key: signingKey?.key)
        let before = snapshot.messages.count
        let published = ContinuousClock.now
        _ = try payload.withUnsafeBytes { try snapshot.client.publish(topic: topic, payload: $0, qos: 1, retain: true) }
        // Our own publish comes back (we are subscribed): anything else on the topic first was another writer.
        let deadline = ContinuousClock.now + .seconds(timeout)
        var echoed = false
        while !echoed, ContinuousClock.now < deadline {
            for message in snapshot.messages.dropFirst(before) where message.topic == topic {
                if message.payload == payload {
                    echoed = true
                    break
                }
                await snapshot.close()
                printError(
                    "another document was published on \(topic) while this one was: run the command again to build on the newest"
                )
                throw ExitCode(1)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        print(
            "published \(target.layer) v\(next.version) on \(topic): \(String(decoding: next.encoded(), as: UTF8.self))"
        )
        if wait > 0 {
            try await report(snapshot, version: next.version, since: published)
        }
        await snapshot.close()
    }

    /// Waits up to `wait` seconds for every online device in the layer's scope to report the version.
    private func report(_ snapshot: RetainedSnapshot, version: Int, since: ContinuousClock.Instant) async throws {
        let layerName = "\(target.layer)"
        let deadline = since + .seconds(wait)
        var rows: [FleetDeviceStatus] = []
        while true {
            rows = FleetDeviceStatus.collect(snapshot.latest.values, root: broker.root).filter { inScope($0) }
            let online = rows.filter(\.online)
            let applied = online.filter { ($0.desired[layerName] ?? 0) >= version }
            if applied.count == online.count, !online.isEmpty || ContinuousClock.now >= deadline { break }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let elapsed = ContinuousClock.now - since
        let online = rows.filter(\.online)
        let applied = online.filter { ($0.desired[layerName] ?? 0) >= version }
        let offline = rows.filter { !$0.online }.map(\.device)
        var line =
            "\(applied.count) of \(rows.count) applied v\(version) in \(String(format: "%.1f", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)) s"
        if !offline.isEmpty { line += "; \(offline.count) offline: \(offline.sorted().joined(separator: ", "))" }
        let behind = online.filter { ($0.desired[layerName] ?? 0) < version }
        if !behind.isEmpty {
            line +=
                "; not yet: "
                + behind.map { row in row.refused.map { "\(row.device) (refused: \($0))" } ?? row.device }
                .joined(separator: ", ")
        }
        print(line)
        if !behind.isEmpty { throw ExitCode(1) }
    }

    private func inScope(_ row: FleetDeviceStatus) -> Bool {
        if let group = target.group { return row.groups.contains(group) }
        if let device = target.device { return row.device == device }
        return true
    }

    /// The keys a retained document must be signed with to be built upon: the signing key's own and those of
    /// `--trusted-keys`; nil (unsigned documents) when neither is given.
    private func verificationKeys(_ signing: OperatorKeyFile?) throws -> OperatorKeys? {
        var keys: [(id: String, publicKey: [UInt8])] = signing.map { [($0.key.id, $0.key.publicKey)] } ?? []
        if let trustedKeys {
            guard let data = FileManager.default.contents(atPath: trustedKeys),
                case .success(let file) = TrustedKeyFile.parse(String(decoding: data, as: UTF8.self))
            else { throw ValidationError("--trusted-keys \(trustedKeys) is not a readable trusted keys file") }
            keys += file.keys.filter { key in !keys.contains { $0.id == key.id } }
        }
        guard !keys.isEmpty else { return nil }
        return try OperatorKeys(TrustedKeyFile(keys: keys))
    }
}
