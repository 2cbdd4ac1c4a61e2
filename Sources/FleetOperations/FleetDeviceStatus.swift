import AgentConfig
import AgentPorts
import Foundation
import MotionWire

/// One device's row in `motion-agent fleet status` and the console's fleet view, from its retained status (and, with
/// `--explain`, its configuration document).
package struct FleetDeviceStatus: Codable, Sendable {
    /// A key whose effective value is not what the newest desired documents ask for, and why.
    package struct Difference: Codable, Sendable, Equatable {
        package var key: String
        package var value: String?
        package var wanted: String
        package var why: String
    }

    package var device: String
    package var online: Bool
    /// When the status was made (Unix s): since when the device is online or offline.
    package var since: Double
    package var groups: [String]
    /// Layer → version in force.
    package var desired: [String: Int]
    package var refused: String?
    /// The last document ignored as older than the one in force (someone published an old version).
    package var ignored: String?
    /// The device the status body names, when it is not the one of its topic.
    package var impostor: String?
    package var differing: [Difference] = []
    /// The values the status shows: command overrides (with their source) and the streams' settings.
    package var known: [String: ConfigurationStatus.Setting] = [:]
    /// What the hardware made of a requested value, per key.
    package var notes: [String: String] = [:]
    /// Every setting's value and source (`--explain`: the device's `{root}/configuration`).
    package var settings: [String: ConfigurationStatus.Setting]?

    package var hasProblem: Bool { !online || refused != nil || !differing.isEmpty || impostor != nil }

    /// `known` is the row's working copy of the status; the JSON carries what the table shows.
    private enum CodingKeys: String, CodingKey {
        case device, online, since, groups, desired, refused, ignored, impostor, differing, notes, settings
    }

    /// The row of the device whose status topic `status` came from: `device` is the topic's, which the shipped
    /// ACL lets only that device write — never what the body claims; a body naming another device is shown as a
    /// problem, not believed.
    package init(_ status: AgentStatus, device: String) {
        let configuration = status.configuration
        self.device = device
        online = status.state == .online
        since = status.time
        groups = configuration?.groups ?? []
        desired = configuration?.desired ?? [:]
        refused = configuration?.refused.map { "\($0.layer) v\($0.version.map(String.init) ?? "?"): \($0.reason)" }
        ignored = configuration?.ignored.map { "\($0.layer): \($0.reason)" }
        impostor = status.device == device ? nil : status.device
        notes = configuration?.notes ?? [:]
        known = Self.streamSettings(status.streams ?? [:])
        for (key, setting) in configuration?.overrides ?? [:] { known[key] = setting }
    }

    /// The device whose `path` topic (`status`, `configuration`) `topic` is, under the `topics.root` template, or
    /// nil.
    package static func device(of topic: String, root template: String, _ path: (TopicScheme) -> String) -> String? {
        let parts = path(TopicScheme(template: template, device: "\u{0}")).components(separatedBy: "\u{0}")
        guard parts.count == 2, topic.hasPrefix(parts[0]), topic.hasSuffix(parts[1]),
            topic.count > parts[0].count + parts[1].count
        else { return nil }
        let device = String(topic.dropFirst(parts[0].count).dropLast(parts[1].count))
        return device.contains("/") ? nil : device
    }

    /// The rows of every device among `statuses` (device of the topic → its newest status), sorted by device.
    package static func collect(_ statuses: [String: AgentStatus]) -> [FleetDeviceStatus] {
        statuses.map { FleetDeviceStatus($0.value, device: $0.key) }.sorted { $0.device < $1.device }
    }

    /// The stream settings a status shows, as config.yaml writes them (the source is not in the status).
    package static func streamSettings(_ streams: [String: AgentStatus.Stream]) -> [String: ConfigurationStatus.Setting]
    {
        var settings: [String: ConfigurationStatus.Setting] = [:]
        func put(_ key: String, _ value: String) {
            settings[key] = ConfigurationStatus.Setting(value: value, source: "status")
        }
        for (name, stream) in streams {
            let prefix = "streams.\(name)."
            put(prefix + "enabled", String(stream.enabled))
            put(prefix + "rate_hz", Self.number(stream.requestedRateHz))
            put(prefix + "qos", String(stream.qos))
            put(prefix + "retain", String(stream.retain))
            put(prefix + "batch", String(stream.batch))
            put(prefix + "encoding", stream.encoding)
            if let frame = stream.referenceFrame { put(prefix + "reference_frame", frame) }
        }
        return settings
    }

    /// A number as config.yaml writes it: `100`, `12.5`.
    package static func number(_ value: Double) -> String {
        Int(exactly: value).map(String.init) ?? String(value)
    }

    /// Fills `differing` from the newest published documents (layer name → document).
    package mutating func compare(with newest: [String: DesiredDocument]) {
        var wanted: [String: (value: String, layer: String, version: Int)] = [:]
        for layer in ["fleet"] + groups.map({ "group \($0)" }) + ["device"] {
            guard let document = newest[layer] else { continue }
            for (key, value) in document.settings.values { wanted[key] = (value, layer, document.version) }
        }
        differing = wanted.keys.sorted().compactMap { key in
            let want = wanted[key]!
            // The full account when read (--explain); else what the status shows.
            let have = settings?[key] ?? known[key]
            if let have, have.value == want.value { return nil }
            let source = have?.source ?? ""
            var why: String
            if source.hasPrefix(ConfigurationStatus.Setting.commandSourcePrefix) {
                why = "overridden by \(source)"
            } else if (desired[want.layer] ?? 0) < want.version {
                why =
                    "\(want.layer) v\(desired[want.layer].map(String.init) ?? "none") applied, v\(want.version) published"
            } else if let have {
                why = source == "status" ? "runs \(have.value)" : "set by \(source) above \(want.layer)"
            } else {
                // The layer's version is in force and the status does not show the key (a setting outside the
                // streams): nothing says it differs; --explain reads every value.
                return nil
            }
            if let note = notes[key] { why += "; \(note)" }
            return Difference(key: key, value: have?.value, wanted: want.value, why: why)
        }
        // A clamp is a difference worth showing even when the requested value matches.
        for (key, note) in notes.sorted(by: { $0.key < $1.key }) where wanted[key] != nil {
            if !differing.contains(where: { $0.key == key }) {
                let value = settings?[key]?.value ?? known[key]?.value
                differing.append(Difference(key: key, value: value, wanted: wanted[key]!.value, why: note))
            }
        }
    }
}
