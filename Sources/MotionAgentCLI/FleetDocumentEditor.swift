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
    var hmacKeyFile: String?

    func edit(setting written: [String: String], unsetting unset: [String]) async throws {
        let topic = target.topic(broker)
        let statusFilter = TopicScheme(template: broker.root, device: "+").status
        let snapshot = try await RetainedSnapshot(
            options: try broker.connectOptions(clientID: "motion-fleet-\(UUID().uuidString.prefix(8))"),
            filters: [topic, statusFilter],
            timeout: timeout
        )
        let current: DesiredDocument
        if let message = snapshot.latest[topic], !message.payload.isEmpty {
            do {
                current = try DesiredDocument.decode(desiredDocumentBytes(message.payload), source: topic)
            } catch {
                await snapshot.close()
                throw ValidationError(
                    "the document retained on \(topic) is not valid (\(error)); publish a corrected one with a higher version"
                )
            }
        } else {
            current = DesiredDocument(version: 0, settings: ConfigurationOverlay())
        }
        let next: DesiredDocument
        do {
            next = try current.updating(setting: written, unsetting: unset, source: "fleet set")
        } catch {
            await snapshot.close()
            throw ValidationError("\(error)")
        }
        var payload = next.encoded()
        if let hmacKeyFile { payload = try signedDocument(payload, keyFile: hmacKeyFile) }
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
                    "another document was published on \(topic) while this one was (\(String(decoding: desiredDocumentBytes(message.payload).prefix(80), as: UTF8.self))…): run the command again to build on the newest"
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

    private func signedDocument(_ document: [UInt8], keyFile: String) throws -> [UInt8] {
        var settings = ControlSettings()
        settings.hmacKeyFile = keyFile
        do {
            guard let key = try settings.readHMACKey() else { throw ValidationError("no key file") }
            return CommandSignature(key: key).envelope(for: document)
        } catch {
            throw ValidationError("--hmac-key-file: \(error)")
        }
    }
}
