import AgentConfig
import AgentPorts
import FleetOperations
import Foundation
import MotionWire

/// What the console knows of the fleet, from what the broker retains and hears under the wildcards: each
/// device's newest status (the highest boot count, then time — over every node), its latest metrics and its
/// configuration document, and the desired documents on the fleet, group and device topics. Pure: fed message by
/// message, it says which devices changed, and renders their rows for the page.
package struct FleetBoard: Sendable {
    /// One device's latest documents.
    struct Entry: Sendable {
        /// Node → the last status it delivered. One node delivers a topic's messages in the order they were
        /// published, so its last is its newest — a will included, whose time is when its connection began and
        /// so precedes its own birth's. Across nodes the newest is the highest boot count, then time.
        var statuses: [Int: AgentStatus] = [:]
        var status: AgentStatus?
        var metrics: AgentMetrics?
        var configurations: [Int: ConfigurationStatus] = [:]
        var configuration: ConfigurationStatus?
    }

    /// What a message changed.
    package enum Change: Sendable, Equatable {
        case none
        case device(String)
        /// A desired document: every device in its layer's scope may now differ.
        case document(topic: String)
    }

    package let root: String
    package let fleetTopic: String
    private(set) var entries: [String: Entry] = [:]
    /// Desired topic → node → the payload it retains (the newest heard), and the newest readable document.
    private(set) var retained: [String: [Int: [UInt8]]] = [:]
    private(set) var documents: [String: DesiredDocument] = [:]
    private let decoder = JSONDecoder()

    package init(root: String, fleetTopic: String = TopicScheme.fleetDesired) {
        self.root = root
        self.fleetTopic = fleetTopic
    }

    /// The filters that bring every device's status, metrics, configuration and the desired documents.
    package var filters: [String] {
        let every = TopicScheme(template: root, device: "+")
        return [
            every.status, every.metrics, every.configuration, every.desired, fleetTopic, TopicScheme.groupDesired("+"),
        ]
    }

    package var deviceIDs: [String] { entries.keys.sorted() }
    package var count: Int { entries.count }

    /// One message from node `node` (the index of its `--server`).
    package mutating func receive(topic: String, payload: [UInt8], node: Int = 0) -> Change {
        if topic == fleetTopic || Self.isGroupDesired(topic) {
            return receiveDocument(topic: topic, payload: payload, node: node)
        }
        if FleetDeviceStatus.device(of: topic, root: root, \.desired) != nil {
            return receiveDocument(topic: topic, payload: payload, node: node)
        }
        // A device's own documents. An empty retained payload (a removal) changes nothing shown.
        guard !payload.isEmpty, (try? StrictJSON.parse(payload, limits: .document)) != nil else { return .none }
        if let device = FleetDeviceStatus.device(of: topic, root: root, \.status) {
            guard var status = try? decoder.decode(AgentStatus.self, from: Data(payload)) else { return .none }
            var entry = entries[device] ?? Entry()
            // A will carries no configuration or streams: what the device ran until it went is its last birth's
            // of the same start, kept so the offline row still says which versions it had applied.
            if let previous = entry.statuses[node], previous.bootCount == status.bootCount {
                if status.configuration == nil { status.configuration = previous.configuration }
                if status.streams == nil { status.streams = previous.streams }
            }
            entry.statuses[node] = status
            entry.status = entry.statuses.values.max { ($0.bootCount, $0.time) < ($1.bootCount, $1.time) }
            entries[device] = entry
            return .device(device)
        }
        if let device = FleetDeviceStatus.device(of: topic, root: root, \.metrics) {
            guard let metrics = try? decoder.decode(AgentMetrics.self, from: Data(payload)) else { return .none }
            entries[device, default: Entry()].metrics = metrics
            return .device(device)
        }
        if let device = FleetDeviceStatus.device(of: topic, root: root, \.configuration) {
            guard let document = try? decoder.decode(ConfigurationStatus.self, from: Data(payload)) else {
                return .none
            }
            var entry = entries[device] ?? Entry()
            entry.configurations[node] = document
            entry.configuration = entry.configurations.values.max {
                ($0.bootCount ?? 0, $0.time ?? 0) < ($1.bootCount ?? 0, $1.time ?? 0)
            }
            entries[device] = entry
            return .device(device)
        }
        return .none
    }

    private mutating func receiveDocument(topic: String, payload: [UInt8], node: Int) -> Change {
        retained[topic, default: [:]][node] = payload
        // The newest readable document over the nodes: what the devices that connect there are handed.
        var newest: DesiredDocument?
        for bytes in retained[topic]!.values where !bytes.isEmpty {
            if let document = RetainedDesiredDocument.document(bytes, topic: topic),
                document.version > (newest?.version ?? Int.min)
            {
                newest = document
            }
        }
        documents[topic] = newest
        return .document(topic: topic)
    }

    /// What each node retains on a desired topic (node → payload).
    package func retainedPayloads(on topic: String) -> [Int: [UInt8]] { retained[topic] ?? [:] }

    /// The devices a document on `topic` concerns: every device for the fleet's, a group's members, one device.
    package func devices(concernedBy topic: String) -> [String] {
        if topic == fleetTopic { return deviceIDs }
        if let group = Self.group(of: topic) {
            return entries.filter { $0.value.status?.configuration?.groups.contains(group) == true }.keys.sorted()
        }
        if let device = FleetDeviceStatus.device(of: topic, root: root, \.desired) {
            return entries[device] == nil ? [] : [device]
        }
        return []
    }

    /// The layer a desired topic belongs to, or nil.
    package func layer(of topic: String) -> ConfigurationLayer? {
        if topic == fleetTopic { return .fleet }
        if let group = Self.group(of: topic) { return .group(group) }
        if FleetDeviceStatus.device(of: topic, root: root, \.desired) != nil { return .device }
        return nil
    }

    static func isGroupDesired(_ topic: String) -> Bool { group(of: topic) != nil }

    static func group(of topic: String) -> String? {
        let parts = TopicScheme.groupDesired("\u{0}").components(separatedBy: "\u{0}")
        guard topic.hasPrefix(parts[0]), topic.hasSuffix(parts[1]), topic.count > parts[0].count + parts[1].count
        else { return nil }
        let name = String(topic.dropFirst(parts[0].count).dropLast(parts[1].count))
        return name.contains("/") ? nil : name
    }

    /// The device's status row, compared with the newest documents of its layers, or nil when no status came.
    package func status(of device: String) -> FleetDeviceStatus? {
        guard let entry = entries[device], let status = entry.status else { return nil }
        var row = FleetDeviceStatus(status, device: device)
        row.settings = entry.configuration?.settings
        var newest: [String: DesiredDocument] = [:]
        newest["fleet"] = documents[fleetTopic]
        for group in row.groups { newest["group \(group)"] = documents[TopicScheme.groupDesired(group)] }
        newest["device"] = documents[TopicScheme(template: root, device: device).desired]
        row.compare(with: newest)
        return row
    }

    /// The page's row for `device`.
    package func row(of device: String) -> ConsoleDeviceRow? {
        guard let entry = entries[device] else { return nil }
        guard let status = status(of: device), let raw = entry.status else {
            return ConsoleDeviceRow(device: device, seen: false)
        }
        var row = ConsoleDeviceRow(device: device, seen: true)
        row.online = status.online
        row.since = status.since
        row.agentVersion = raw.agentVersion
        row.bootCount = raw.bootCount
        row.groups = status.groups
        row.desired = status.desired
        row.refused = status.refused
        row.ignored = status.ignored
        row.impostor = status.impostor
        row.differing = status.differing
        row.problem = status.hasProblem
        row.outboxDepth = raw.outbox?.depth
        if let metrics = entry.metrics, metrics.bootCount >= raw.bootCount {
            row.metrics = ConsoleDeviceRow.Metrics(metrics)
            row.outboxDepth = metrics.outbox.depth
        }
        return row
    }

    /// The device view's documents: the status's streams and device, the configuration's settings.
    package func detail(of device: String) -> ConsoleDeviceDetail? {
        guard let entry = entries[device] else { return nil }
        return ConsoleDeviceDetail(
            device: device,
            row: row(of: device),
            streams: entry.status?.streams ?? [:],
            hardware: entry.status?.devices,
            configuration: entry.configuration
        )
    }

    /// The newest readable document per desired topic, as the page lists them.
    package var documentSummaries: [ConsoleDocument] {
        documents.keys.sorted().compactMap { topic in
            guard let document = documents[topic], let layer = layer(of: topic) else { return nil }
            return ConsoleDocument(
                topic: topic,
                layer: "\(layer)",
                version: document.version,
                clear: document.clear,
                settings: document.settings.values
            )
        }
    }
}
