import AgentConfig
import AgentCore
import AgentPorts
import ArgumentParser
import Foundation

/// `motion-agent fleet`: the desired state operators publish (docs/fleet.md) and what the devices report of it.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Read and change the fleet's desired state; see which devices run it (docs/fleet.md).",
        subcommands: [FleetStatusCommand.self, FleetGetCommand.self, FleetSetCommand.self, FleetUnsetCommand.self]
    )
}

/// Which layer's desired document a `fleet get|set|unset` addresses.
struct FleetTarget: ParsableArguments {
    @Flag(help: "The fleet's document (control.fleet_desired_topic).") var fleet = false
    @Option(help: "A group's document (its members list it under control.groups).") var group: String?
    @Option(help: "One device's document ({root}/desired).") var device: String?
    @Option(help: "The fleet's desired topic.") var fleetTopic = TopicScheme.fleetDesired

    func validate() throws {
        guard [fleet, group != nil, device != nil].filter({ $0 }).count == 1 else {
            throw ValidationError("address exactly one of --fleet, --group NAME or --device ID")
        }
    }

    func topic(_ broker: BrokerOptions) -> String {
        if let group { return TopicScheme.groupDesired(group) }
        if let device { return broker.topics(device: device).desired }
        return fleetTopic
    }

    /// How the devices' status names this layer (`fleet`, `group lab`, `device`).
    var layer: ConfigurationLayer {
        if let group { return .group(group) }
        if device != nil { return .device }
        return .fleet
    }
}

/// The bytes of a desired document as published: a signed envelope's inner document, or the payload itself.
func desiredDocumentBytes(_ payload: [UInt8]) -> [UInt8] {
    guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
        object.count == 2, let signed = object["signed"] as? String, object["signature"] != nil,
        let inner = Data(base64Encoded: signed)
    else { return payload }
    return Array(inner)
}

struct FleetGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print a layer's retained desired document."
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var target: FleetTarget
    @Option(help: "Seconds to wait for the broker.") var timeout: Double = 5

    func run() async throws {
        let topic = target.topic(broker)
        let snapshot = try await RetainedSnapshot(
            options: try broker.connectOptions(clientID: "motion-fleet-\(UUID().uuidString.prefix(8))"),
            filters: [topic],
            timeout: timeout
        )
        defer { Task { await snapshot.close() } }
        guard let message = snapshot.latest[topic], !message.payload.isEmpty else {
            printError("no desired document is retained on \(topic)")
            throw ExitCode(1)
        }
        print(String(decoding: desiredDocumentBytes(message.payload), as: UTF8.self))
        await snapshot.close()
    }
}

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

struct FleetSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set keys in a layer's desired document (version + 1, retained) and report who applied it.",
        discussion: """
            Keys are config.yaml's runtime keys, checked by its schema:
              motion-agent fleet set --fleet streams.accelerometer.rate_hz=100 streams.magnetometer.enabled=false
              motion-agent fleet set --group lab metrics.interval_s=30 --wait 10
            """
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var target: FleetTarget
    @Option(help: "Seconds to wait for the broker.") var timeout: Double = 5
    @Option(help: "Seconds to wait for the devices to report the new version (0: do not wait).") var wait: Double = 5
    @Option(help: "Sign the document with the HMAC key in this file (the devices' control.hmac_key_file).")
    var hmacKeyFile: String?
    @Argument(help: "KEY=VALUE pairs, e.g. streams.gyroscope.rate_hz=50.") var assignments: [String]

    func run() async throws {
        var written: [String: String] = [:]
        for pair in assignments {
            guard let eq = pair.firstIndex(of: "=") else {
                throw ValidationError("'\(pair)' is not KEY=VALUE, e.g. streams.gyroscope.rate_hz=50")
            }
            written[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
        }
        try await FleetDocumentEditor(
            broker: broker,
            target: target,
            timeout: timeout,
            wait: wait,
            hmacKeyFile: hmacKeyFile
        )
        .edit(setting: written, unsetting: [])
    }
}

struct FleetUnsetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unset",
        abstract: "Remove keys (or whole sections) from a layer's desired document (version + 1, retained)."
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var target: FleetTarget
    @Option(help: "Seconds to wait for the broker.") var timeout: Double = 5
    @Option(help: "Seconds to wait for the devices to report the new version (0: do not wait).") var wait: Double = 5
    @Option(help: "Sign the document with the HMAC key in this file.") var hmacKeyFile: String?
    @Argument(help: "Keys or sections, e.g. streams.gyroscope.rate_hz or streams.gyroscope.") var keys: [String]

    func run() async throws {
        try await FleetDocumentEditor(
            broker: broker,
            target: target,
            timeout: timeout,
            wait: wait,
            hmacKeyFile: hmacKeyFile
        )
        .edit(setting: [:], unsetting: keys)
    }
}
