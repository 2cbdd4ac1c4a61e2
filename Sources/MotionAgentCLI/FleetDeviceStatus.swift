import AgentConfig
import AgentControl
import AgentPipeline
import AgentPorts
import AgentRuntime
import Foundation
import MotionWire

/// One device's row in `motion-agent fleet status`, from its retained status.
struct FleetDeviceStatus: Codable {
    /// A key whose effective value is not what the newest desired documents ask for, and why.
    struct Difference: Codable {
        var key: String
        var value: String?
        var wanted: String
        var why: String
    }

    var device: String
    var online: Bool
    /// When the status was made (Unix s): since when the device is online or offline.
    var since: Double
    var groups: [String]
    /// Layer → version in force.
    var desired: [String: Int]
    var refused: String?
    /// The last document ignored as older than the one in force (someone published an old version).
    var ignored: String?
    /// The device the status body names, when it is not the one of its topic.
    var impostor: String?
    var differing: [Difference] = []
    /// The effective settings as the device reports them.
    var settings: [String: ConfigurationStatus.Setting] = [:]

    var hasProblem: Bool { !online || refused != nil || !differing.isEmpty || impostor != nil }

    /// The device whose status `topic` is (`{root}/status` under the `topics.root` template), or nil.
    static func device(ofStatusTopic topic: String, root template: String) -> String? {
        let parts = TopicScheme(template: template, device: "\u{0}").status.components(separatedBy: "\u{0}")
        guard parts.count == 2, topic.hasPrefix(parts[0]), topic.hasSuffix(parts[1]),
            topic.count > parts[0].count + parts[1].count
        else { return nil }
        let device = String(topic.dropFirst(parts[0].count).dropLast(parts[1].count))
        return device.contains("/") ? nil : device
    }

    /// The rows of every device whose retained status is among `messages`, keyed by the device of the topic each
    /// came from — which the shipped ACL lets only that device write — never by what the body claims; a body
    /// naming another device is shown as a problem, not believed.
    static func collect(_ messages: some Sequence<InboundMessage>, root: String) -> [FleetDeviceStatus] {
        let decoder = JSONDecoder()
        var rows: [String: FleetDeviceStatus] = [:]
        for message in messages where !message.payload.isEmpty {
            guard let device = device(ofStatusTopic: message.topic, root: root),
                (try? StrictJSON.parse(message.payload, limits: .document)) != nil,
                let status = try? decoder.decode(AgentStatus.self, from: Data(message.payload))
            else { continue }
            let configuration = status.configuration
            rows[device] = FleetDeviceStatus(
                device: device,
                online: status.state == .online,
                since: status.time,
                groups: configuration?.groups ?? [],
                desired: configuration?.desired ?? [:],
                refused: configuration?.refused.map {
                    "\($0.layer) v\($0.version.map(String.init) ?? "?"): \($0.reason)"
                },
                ignored: configuration?.ignored.map { "\($0.layer): \($0.reason)" },
                impostor: status.device == device ? nil : status.device,
                settings: configuration?.settings ?? [:]
            )
        }
        return rows.values.sorted { $0.device < $1.device }
    }

    /// Fills `differing` from the newest published documents (layer name → document).
    mutating func compare(with newest: [String: DesiredDocument]) {
        var wanted: [String: (value: String, layer: String, version: Int)] = [:]
        for layer in ["fleet"] + groups.map({ "group \($0)" }) + ["device"] {
            guard let document = newest[layer] else { continue }
            for (key, value) in document.settings.values { wanted[key] = (value, layer, document.version) }
        }
        differing = wanted.keys.sorted().compactMap { key in
            let want = wanted[key]!
            let have = settings[key]
            guard have?.value != want.value else { return nil }
            var why: String
            if let source = have?.source, source.hasPrefix("command ") {
                why = "overridden by \(source)"
            } else if (desired[want.layer] ?? 0) < want.version {
                why =
                    "\(want.layer) v\(desired[want.layer].map(String.init) ?? "none") applied, v\(want.version) published"
            } else {
                why = "set by \(have?.source ?? "nothing") above \(want.layer)"
            }
            if let note = have?.note { why += "; \(note)" }
            return Difference(key: key, value: have?.value, wanted: want.value, why: why)
        }
        // A clamp is a difference worth showing even when the requested value matches.
        for (key, setting) in settings.sorted(by: { $0.key < $1.key }) where wanted[key] != nil {
            if let note = setting.note, setting.value == wanted[key]!.value {
                differing.append(Difference(key: key, value: setting.value, wanted: wanted[key]!.value, why: note))
            }
        }
    }
}
