import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import ArgumentParser
import FleetOperations
import Foundation
import MotionWire

/// Read-modify-write of one layer's retained document on every node (`--server`, repeated): version + 1 over the
/// newest any node retains, published retained to each node; refused when another document appears on the topic
/// meanwhile; then, with `--wait`, waits for the devices on every node to report it.
struct FleetDocumentEditor {
    var broker: BrokerOptions
    var target: FleetTarget
    /// --timeout, --wait, --devices, --signing-key, --trusted-keys, --replace, --document-version.
    var options: FleetEditOptions
    var timeout: Double { options.timeout }
    var wait: Double { options.wait }
    var key: String? { options.signingKey }
    var trustedKeys: String? { options.trustedKeys }
    var replace: Bool { options.replace }
    var version: Int? { options.version }
    var devices: String? { options.devices }

    /// Publishes the next version of the layer's document: `written` set and `unset` removed, or (`clearing`)
    /// a clear, which removes the layer on every device, also those away now, when they next connect.
    func edit(setting written: [String: String], unsetting unset: [String], clearing: Bool = false) async throws {
        let listed = try devices.map(FleetStatusCommand.readDevices) ?? []
        let snapshot = try await FleetSnapshot.open(broker, reading: options.reading, timeout: timeout)
        do {
            try await edit(snapshot, listed: listed, setting: written, unsetting: unset, clearing: clearing)
        } catch {
            await snapshot.close()
            throw error
        }
        await snapshot.close()
    }

    private func edit(
        _ snapshot: FleetSnapshot,
        listed: [String],
        setting written: [String: String],
        unsetting unset: [String],
        clearing: Bool
    ) async throws {
        let topic = target.topic(broker)
        let statusFilter = TopicScheme(template: broker.root, device: "+").status
        try await snapshot.read([topic, statusFilter], timeout: timeout)
        // The listed devices' statuses by name where the wildcard brought nothing retained (RabbitMQ).
        let blind = snapshot.blindToWildcards(named: [topic])
        if !blind.isEmpty {
            try await snapshot.read(listed.map { broker.topics(device: $0).status }, timeout: timeout, on: blind)
        }
        let signingKey = try key.map { try OperatorKeyFile(path: $0) }
        let opener = DesiredDocumentOpener(keys: try verificationKeys(signingKey))
        let retained = snapshot.retained(on: topic) { payload in
            opener.open(payload, layer: target.layer, topic: topic).mapError {
                FleetSnapshot.Unreadable(reason: $0.reason)
            }
        }
        // What the devices in scope report running for this layer.
        let layerName = "\(target.layer)"
        var reported: [String: Int] = [:]
        for row in FleetDeviceStatus.collect(snapshot.statuses(root: broker.root)) where inScope(row) {
            if let version = row.desired[layerName] { reported[row.device] = version }
        }
        let planner = DesiredEditPlanner(
            layer: target.layer,
            topic: topic,
            signingKey: signingKey?.key,
            replace: replace,
            version: version
        )
        let edit: DesiredEditPlanner.Edit
        do {
            edit = try planner.plan(
                clearing ? .clear : .set(written, unset: unset),
                retained: retained.document,
                unreadable: retained.unreadable,
                reported: reported
            )
        } catch {
            throw ValidationError(error.description)
        }
        let next = edit.document
        let payload = edit.payload
        let before = snapshot.nodes.map(\.count)
        let published = ContinuousClock.now
        // The same bytes to every node: where nodes keep retained messages apart (RabbitMQ) each needs its copy;
        // where they share them (NATS, one mosquitto) the copies are one document, which a device applies once.
        for node in snapshot.nodes {
            _ = try payload.withUnsafeBytes { try node.client.publish(topic: topic, payload: $0, qos: 1, retain: true) }
        }
        // Our own publish comes back on every node (we are subscribed): anything else on the topic first was
        // another writer.
        let deadline = ContinuousClock.now + .seconds(timeout)
        var echoed = Set<String>()
        while echoed.count < snapshot.nodes.count, ContinuousClock.now < deadline {
            for (index, node) in snapshot.nodes.enumerated() where !echoed.contains(node.node) {
                for message in node.messages(from: before[index]) where message.topic == topic {
                    if message.payload == payload {
                        echoed.insert(node.node)
                        break
                    }
                    printError(
                        "another document was published on \(topic) while this one was: run the command again to build on the newest"
                    )
                    throw ExitCode(1)
                }
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        let nodes = snapshot.nodes.count > 1 ? " to \(snapshot.nodes.count) nodes" : ""
        print(
            "published \(target.layer) v\(next.version) on \(topic)\(nodes): \(String(decoding: next.encoded(), as: UTF8.self))"
        )
        let missed = snapshot.names.filter { !echoed.contains($0) }
        if !missed.isEmpty {
            printError(
                "\(missed.joined(separator: ", ")) did not confirm v\(next.version) within \(timeout) s: check those nodes and publish again"
            )
        }
        if wait > 0 {
            try await report(snapshot, listed: listed, version: next.version, since: published)
        }
        if !missed.isEmpty { throw ExitCode(1) }
    }

    /// Waits up to `wait` seconds for every online device in the layer's scope, on any node, to report the
    /// version.
    private func report(
        _ snapshot: FleetSnapshot,
        listed: [String],
        version: Int,
        since: ContinuousClock.Instant
    ) async throws {
        let layerName = "\(target.layer)"
        let deadline = since + .seconds(wait)
        var book = StatusBook(root: broker.root)
        var rows: [FleetDeviceStatus] = []
        // A clear's version is kept like any other's: a device that applied it reports the layer at that version.
        func applied(_ row: FleetDeviceStatus) -> Bool { (row.desired[layerName] ?? 0) >= version }
        // Only the fleet's scope is known without a status: a group's members and a device name themselves.
        let expected = target.group == nil && target.device == nil ? listed : []
        while true {
            book.update(from: snapshot)
            rows = FleetDeviceStatus.collect(book.newest).filter { inScope($0) }
            let online = rows.filter(\.online)
            let done = online.filter(applied)
            let seen = Set(rows.map(\.device))
            let unseen = expected.filter { !seen.contains($0) }
            if done.count == online.count, unseen.isEmpty, !online.isEmpty || ContinuousClock.now >= deadline { break }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let elapsed = ContinuousClock.now - since
        let online = rows.filter(\.online)
        let done = online.filter(applied)
        let offline = rows.filter { !$0.online }.map(\.device)
        let seen = Set(rows.map(\.device))
        let unseen = expected.filter { !seen.contains($0) }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        var line =
            "\(done.count) of \(rows.count + unseen.count) applied v\(version) in \(String(format: "%.1f", seconds)) s"
        if snapshot.nodes.count > 1 { line += " (statuses read on \(snapshot.nodes.count) nodes)" }
        if !offline.isEmpty { line += "; \(offline.count) offline: \(offline.sorted().joined(separator: ", "))" }
        if !unseen.isEmpty { line += "; \(unseen.count) never seen: \(unseen.joined(separator: ", "))" }
        let behind = online.filter { !applied($0) }
        if !behind.isEmpty {
            line +=
                "; not yet: "
                + behind.map { row in
                    let device = Printable.text(row.device, limit: 64)
                    return row.refused.map { "\(device) (refused: \(Printable.text($0, limit: 400)))" } ?? device
                }
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
        var trusted: TrustedKeyFile?
        if let trustedKeys {
            guard let data = FileManager.default.contents(atPath: trustedKeys),
                case .success(let file) = TrustedKeyFile.parse(String(decoding: data, as: UTF8.self))
            else { throw ValidationError("--trusted-keys \(trustedKeys) is not a readable trusted keys file") }
            trusted = file
        }
        return try DesiredEditPlanner.verificationKeys(signing: signing?.key, trusted: trusted)
    }
}
