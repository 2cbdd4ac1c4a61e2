import AgentConfig
import AgentPorts
import ArgumentParser
import FleetOperations
import Foundation
import MotionWire

struct FleetStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "One row per device from the retained statuses: online or offline, desired versions applied vs. published, keys that differ and why.",
        discussion: """
            Devices with a problem (offline, behind, refused, differing, never seen) come first; a desired \
            document some node does not retain is named too. Exit status 1 when there is any problem.

            On a cluster, pass every node (--server, repeated): what each node retains is read and the newest \
            kept. RabbitMQ serves a retained message only to a subscription of exactly its topic, never to a \
            wildcard: there, name the devices (--devices FILE, one id per line, e.g. from the Ansible inventory).
            """
    )

    @OptionGroup var broker: BrokerOptions
    @OptionGroup var reading: FleetReadOptions
    @Option(help: "Only the devices in this group.") var group: String?
    @Option(help: "The fleet's desired topic.") var fleetTopic = TopicScheme.fleetDesired
    @Option(
        help:
            "A file of device ids, one per line (# comments): read each one's topics by name, and name those never seen."
    )
    var devices: String?
    @Flag(help: "Also read each device's configuration document and print every setting with its source.")
    var explain = false
    @Flag(help: "Print JSON (one array of rows) instead of a table.") var json = false
    @Option(help: "Seconds to wait for the broker.") var timeout: Double = 5

    func run() async throws {
        let listed = try devices.map(Self.readDevices) ?? []
        let snapshot = try await FleetSnapshot.open(broker, reading: reading, timeout: timeout)
        let report: FleetReport
        do {
            report = try await read(snapshot, listed: listed)
        } catch {
            await snapshot.close()
            throw error
        }
        await snapshot.close()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            // The rows carry the devices' own text: JSON leaves C1 controls raw, Printable.json escapes them too.
            print(Printable.json(String(decoding: try encoder.encode(report.rows), as: UTF8.self)))
        } else {
            print(report.table(root: broker.root, explain: explain))
        }
        if report.hasProblem { throw ExitCode(1) }
    }

    /// Reads the statuses and documents of every node and builds the rows.
    private func read(_ snapshot: FleetSnapshot, listed: [String]) async throws -> FleetReport {
        let every = TopicScheme(template: broker.root, device: "+")
        var filters = [every.status, every.desired, fleetTopic, TopicScheme.groupDesired("+")]
        if explain { filters.append(every.configuration) }
        try await snapshot.read(filters, timeout: timeout)
        // Where the wildcards brought nothing retained (RabbitMQ), the listed devices' topics by name.
        let blind = snapshot.blindToWildcards(named: [fleetTopic])
        var named = [String]()
        for device in listed {
            let topics = broker.topics(device: device)
            named += [topics.status, topics.desired] + (explain ? [topics.configuration] : [])
        }
        if !blind.isEmpty { try await snapshot.read(named, timeout: timeout, on: blind) }
        var statuses = snapshot.statuses(root: broker.root)
        if let group { statuses = statuses.filter { $0.value.configuration?.groups.contains(group) == true } }
        // There also what the statuses name: the groups' documents, each device's.
        var more = Set<String>()
        for (device, status) in statuses {
            for name in status.configuration?.groups ?? [] { more.insert(TopicScheme.groupDesired(name)) }
            let topics = broker.topics(device: device)
            more.insert(topics.desired)
            if explain { more.insert(topics.configuration) }
        }
        more.subtract(filters + named)
        if !blind.isEmpty { try await snapshot.read(more.sorted(), timeout: timeout, on: blind) }

        var report = FleetReport()
        var rows = FleetDeviceStatus.collect(statuses)
        if explain {
            let configurations = snapshot.configurations(root: broker.root)
            for index in rows.indices {
                rows[index].settings = configurations[rows[index].device]?.settings
            }
        }
        var documents: [String: FleetSnapshot.Retained] = [:]
        let latest = snapshot.latest
        func retained(_ topic: String, _ layer: String) -> FleetSnapshot.Retained {
            if let known = documents[topic] { return known }
            let found = snapshot.retained(on: topic, in: latest)
            documents[topic] = found
            for (node, problem) in found.unreadable.sorted(by: { $0.key < $1.key }) {
                report.notes.append("\(layer) document on \(topic) at \(node) is not valid: \(problem)")
            }
            if snapshot.nodes.count > 1, let version = found.document?.version, !found.behind.isEmpty {
                report.notes.append(
                    "\(layer) v\(version) on \(topic) is not retained by \(found.behind.joined(separator: ", ")) "
                        + "(devices connecting there get an older one): publish it again to every node (fleet set)"
                )
            }
            return found
        }
        for index in rows.indices {
            var newest: [String: DesiredDocument] = [:]
            newest["fleet"] = retained(fleetTopic, "fleet").document
            for name in rows[index].groups {
                newest["group \(name)"] = retained(TopicScheme.groupDesired(name), "group \(name)").document
            }
            newest["device"] = retained(broker.topics(device: rows[index].device).desired, "device").document
            rows[index].compare(with: newest)
        }
        let seen = Set(rows.map(\.device))
        report.missing = listed.filter { !seen.contains($0) }
        if group != nil { report.missing = [] }
        rows.sort { ($0.hasProblem ? 0 : 1, $0.device) < ($1.hasProblem ? 0 : 1, $1.device) }
        report.rows = rows
        return report
    }

    /// Device ids from a file: one per line, blank lines and `#` comments ignored.
    static func readDevices(_ path: String) throws -> [String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ValidationError("cannot read --devices \(path): check the path and its permissions")
        }
        var ids: [String] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let id = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .trimmingCharacters(in: .whitespaces)
            guard !id.isEmpty else { continue }
            if let problem = TopicScheme.levelProblem(id) {
                throw ValidationError("--devices \(path) line \(number + 1): the device id '\(id)' \(problem)")
            }
            ids.append(id)
        }
        return ids
    }
}

/// What `fleet status` found: a row per device, the listed devices never seen, and notes about the documents.
struct FleetReport {
    var rows: [FleetDeviceStatus] = []
    /// Devices named by --devices with no status on any node.
    var missing: [String] = []
    /// Documents a node does not retain, or retains unreadable.
    var notes: [String] = []

    var hasProblem: Bool { rows.contains(where: \.hasProblem) || !missing.isEmpty || !notes.isEmpty }

    func table(root: String, explain: Bool) -> String {
        var lines: [String] = []
        // Everything but a device taken from a topic or the --devices file is the devices' own text: printed
        // through `Printable`, so escape sequences in a status never reach the operator's terminal.
        func text(_ value: String) -> String { Printable.text(value, limit: 400) }
        for note in notes { lines.append("note: \(text(note))") }
        for device in missing { lines.append("\(device)\tNEVER SEEN\tno status retained on any node") }
        guard !rows.isEmpty || !missing.isEmpty else {
            lines.append(
                "no device status is retained under \(root) (on RabbitMQ a wildcard finds none: pass --devices FILE)"
            )
            return lines.joined(separator: "\n")
        }
        let formatter = ISO8601DateFormatter()
        func when(_ seconds: Double) -> String {
            // A status's time is the device's number: only a plausible one goes through the date formatter.
            guard seconds.isFinite, seconds > 0, seconds < 32_503_680_000 else { return "\(seconds)" }
            return formatter.string(from: Date(timeIntervalSince1970: seconds))
        }
        for row in rows {
            let state = (row.online ? "online" : "OFFLINE") + " since " + when(row.since)
            let versions = row.desired.keys.sorted().map { "\(text($0)) v\(row.desired[$0]!)" }.joined(separator: ", ")
            lines.append("\(text(row.device))\t\(state)\t\(versions.isEmpty ? "no desired documents" : versions)")
            if let impostor = row.impostor {
                lines.append(
                    "  its status names the device \(text(impostor)): not believed (the topic says \(text(row.device)))"
                )
            }
            if let refused = row.refused { lines.append("  refused \(text(refused))") }
            if let ignored = row.ignored { lines.append("  ignored \(text(ignored))") }
            for difference in row.differing {
                lines.append(
                    "  \(text(difference.key)) = \(text(difference.value ?? "—")), desired \(text(difference.wanted)): \(text(difference.why))"
                )
            }
            if explain {
                guard let settings = row.settings else {
                    lines.append("  (no configuration document ({root}/configuration) is retained for it)")
                    continue
                }
                for key in settings.keys.sorted() {
                    let setting = settings[key]!
                    lines.append(
                        "    \(text(key)) = \(text(setting.value))\t\(text(setting.source))\(setting.note.map { "; \(text($0))" } ?? "")"
                    )
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}
