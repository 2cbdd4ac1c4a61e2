import AgentConfig
import AgentPorts
import ArgumentParser
import Foundation
import MotionWire

struct FleetStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "One row per device from the retained statuses: online or offline, desired versions applied vs. published, keys that differ and why.",
        discussion:
            "Devices with a problem (offline, behind, refused, differing) come first. Exit status 1 when any has one."
    )

    @OptionGroup var broker: BrokerOptions
    @Option(help: "Only the devices in this group.") var group: String?
    @Option(help: "The fleet's desired topic.") var fleetTopic = TopicScheme.fleetDesired
    @Flag(help: "Print JSON (one array of rows) instead of a table.") var json = false
    @Option(help: "Seconds to wait for the broker.") var timeout: Double = 5

    func run() async throws {
        let everyDevice = TopicScheme(template: broker.root, device: "+")
        let snapshot = try await RetainedSnapshot(
            options: try broker.connectOptions(clientID: "motion-fleet-\(UUID().uuidString.prefix(8))"),
            filters: [everyDevice.status, everyDevice.desired, fleetTopic, TopicScheme.groupDesired("+")],
            timeout: timeout
        )
        let latest = snapshot.latest
        await snapshot.close()
        var rows = FleetDeviceStatus.collect(latest.values, root: broker.root)
        if let group { rows = rows.filter { $0.groups.contains(group) } }
        for index in rows.indices {
            var newest: [String: DesiredDocument] = [:]
            func read(_ topic: String, as layer: String) {
                guard let message = latest[topic], !message.payload.isEmpty,
                    let document = retainedDocument(message.payload, topic: topic)
                else { return }
                newest[layer] = document
            }
            read(fleetTopic, as: "fleet")
            for name in rows[index].groups { read(TopicScheme.groupDesired(name), as: "group \(name)") }
            read(broker.topics(device: rows[index].device).desired, as: "device")
            rows[index].compare(with: newest)
            if let refused = rows[index].refused, newest.isEmpty { rows[index].refused = refused }
        }
        rows.sort { ($0.hasProblem ? 0 : 1, $0.device) < ($1.hasProblem ? 0 : 1, $1.device) }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            var printable = rows
            for index in printable.indices { printable[index].settings = [:] }
            print(String(decoding: try encoder.encode(printable), as: UTF8.self))
        } else {
            print(table(rows))
        }
        if rows.contains(where: \.hasProblem) { throw ExitCode(1) }
    }

    /// The rows as text. Everything but the device (from the topic) is the device's own text: printed through
    /// `Printable`, so escape sequences in a status never reach the operator's terminal.
    private func table(_ rows: [FleetDeviceStatus]) -> String {
        guard !rows.isEmpty else { return "no device status is retained under \(broker.root)" }
        let formatter = ISO8601DateFormatter()
        func when(_ seconds: Double) -> String {
            // A status's time is the device's number: only a plausible one goes through the date formatter.
            guard seconds.isFinite, seconds > 0, seconds < 32_503_680_000 else { return "\(seconds)" }
            return formatter.string(from: Date(timeIntervalSince1970: seconds))
        }
        func text(_ value: String) -> String { Printable.text(value, limit: 400) }
        var lines: [String] = []
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
        }
        return lines.joined(separator: "\n")
    }
}
