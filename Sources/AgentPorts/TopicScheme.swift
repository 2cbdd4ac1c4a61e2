/// Every topic the agent and its operator commands use, built in one place from `topics.root` (with `{device}`
/// substituted), and the one rule deciding whether a string may be published to as a topic.
///
/// MQTT 5.0 §4.7: `+` and `#` are wildcards for subscribers only, `/` separates levels; §1.5.4: strings are UTF-8
/// without U+0000, at most 65535 bytes. The agent's own configured topics also keep clear of `$` (brokers reserve
/// it for `$SYS`) and of empty levels (a doubled `/` is almost always a typo).
///
/// `public` (the `MotionWire` product) is only what a subscriber needs: what to subscribe to (`everything`,
/// `topic(_:)` of a payload) and the way from a received topic to its payload's decoder — the scheme
/// (`init(root:)`, `init(template:device:)`), `subject(of:)`, `Subject` and `PayloadKind(subject:)`, then
/// `PayloadDecoder.decode(_:kind:)`. The rest is `package` (CONTRIBUTING.md, "Access").
public struct TopicScheme: Sendable, Hashable {
    package let root: String

    public init(root: String) {
        var r = root
        while r.hasSuffix("/") { r.removeLast() }
        self.root = r
    }

    /// The scheme of one device from a `topics.root` template such as `motion/{device}`.
    public init(template: String, device: String) {
        self.init(root: Self.substitute(template, device: device))
    }

    /// The placeholder `topics.root` and `mqtt.client_id` templates replace with `device.id`.
    package static let devicePlaceholder = "{device}"

    /// Every `{device}` in `template` replaced by `device`.
    ///
    /// Written out rather than `replacing(_:with:)`: that one lives in _StringProcessing, a 387 KiB section of
    /// the static binary that nothing else on the agent's path touches, and its generic searchers sat scattered
    /// over it — one call at start-up kept ~270 KiB of it resident (BENCHMARKS.md, "Memory").
    package static func substitute(_ template: String, device: String) -> String {
        let text = Array(template.utf8)
        let placeholder = Array(devicePlaceholder.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(text.count + device.utf8.count)
        var index = 0
        while index < text.count {
            if text.count - index >= placeholder.count,
                text[index..<index + placeholder.count].elementsEqual(placeholder)
            {
                result.append(contentsOf: device.utf8)
                index += placeholder.count
            } else {
                result.append(text[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// What a topic under the root carries.
    public enum Subject: Sendable, Hashable {
        /// A stream topic (`{root}/device-motion`, `{root}/pedometer/events`, …): its payload, whose stream
        /// descriptor names the path.
        case payload(PayloadKind)
        /// Retained birth and will: `online` / `offline` with the agent's state.
        case status
        /// Retained: every runtime setting's value and source (docs/fleet.md), published at each connection and
        /// when it changes — the status carries only its summary.
        case configuration
        /// The agent's health report (`metrics.interval_s`): QoS 0, not retained.
        case metrics
        case control
        case controlReply
        /// The device layer's desired state: a retained `{"version": N, …}` document operators publish
        /// (docs/fleet.md).
        case desired

        /// A stream's own topic: one name everywhere, config key, topic, command.
        package static func stream(_ name: StreamName) -> Subject { .payload(name.descriptor.primary.payload) }

        /// The topic's levels after the root.
        package var path: String {
            switch self {
            case .payload(let kind): kind.topic.path
            case .status: "status"
            case .configuration: "configuration"
            case .metrics: "metrics"
            case .control: "control"
            case .controlReply: "control/reply"
            case .desired: "desired"
            }
        }

        /// Every subject, stream topics first.
        package static let all: [Subject] =
            StreamDescriptor.allTopics.map { .payload($0.payload) } + [
                .status, .configuration, .metrics, .control, .controlReply, .desired,
            ]

        /// The subject whose path is `path`, if any.
        package init?(path: String) {
            guard let subject = Self.all.first(where: { $0.path == path }) else { return nil }
            self = subject
        }
    }

    package func topic(_ subject: Subject) -> String { topic(path: subject.path) }
    /// `{root}/path`, for levels given by an operator (`motion-agent sub --stream`).
    package func topic(path: String) -> String { "\(root)/\(path)" }
    package func stream(_ name: StreamName) -> String { topic(.stream(name)) }
    /// The topic of a stream's payload, its own or one it derives.
    public func topic(_ payload: PayloadKind) -> String { topic(.payload(payload)) }
    package var status: String { topic(.status) }
    package var configuration: String { topic(.configuration) }
    package var metrics: String { topic(.metrics) }
    package var control: String { topic(.control) }
    package var controlReply: String { topic(.controlReply) }
    package var desired: String { topic(.desired) }
    /// The subscription filter for everything the device publishes.
    public var everything: String { "\(root)/#" }

    /// `topic` without the root and its `/`, or nil when it is not under the root.
    package func path(of topic: String) -> String? {
        guard topic.hasPrefix(root + "/") else { return nil }
        return String(topic.dropFirst(root.count + 1))
    }

    /// What `topic` carries, or nil when it is not one of the device's topics.
    public func subject(of topic: String) -> Subject? {
        path(of: topic).flatMap(Subject.init(path:))
    }

    /// The default of `control.fleet_topic`: commands for every device.
    package static let fleetControl = "motion/fleet/control"
    /// A group's command topic, shared by every member (`control.groups`).
    package static func groupControl(_ group: String) -> String { "motion/group/\(group)/control" }
    /// The default of `control.fleet_desired_topic`: the fleet layer's desired state (retained).
    package static let fleetDesired = "motion/fleet/desired"
    /// A group layer's desired state (retained), read by every member (`control.groups`).
    package static func groupDesired(_ group: String) -> String { "motion/group/\(group)/desired" }
    /// Where `motion-agent ctl` asks MQTT 5 devices to answer (its response topic).
    package static func operatorReply(clientID: String) -> String { "motion-ctl/\(clientID)/reply" }
    /// Every device's reply topic under a `topics.root` template, for MQTT 3.1.1 operators (no response topic).
    package static func everyDeviceReply(template: String) -> String {
        TopicScheme(template: template, device: "+").controlReply
    }

    /// Home Assistant's discovery topic for one entity: `<prefix>/<component>/<node_id>/<object_id>/config`.
    package static func homeAssistantConfig(
        prefix: String,
        component: String,
        nodeID: String,
        objectID: String
    )
        -> String
    {
        var p = prefix
        while p.hasSuffix("/") { p.removeLast() }
        return "\(p)/\(component)/\(nodeID)/\(objectID)/config"
    }

    // MARK: Validation

    /// Why `topic` cannot be published to, or nil when a broker accepts it: not empty, no wildcard, no NUL, at
    /// most 65535 bytes. The wording completes "the topic …".
    package static func publishingProblem(_ topic: String) -> String? {
        problem(topic, configured: false)
    }

    /// Why `topic` is not acceptable as one the agent is configured with, or nil: the publishing rule, plus no
    /// leading `$` and no empty level.
    package static func configuredProblem(_ topic: String) -> String? {
        problem(topic, configured: true)
    }

    /// Why `name` cannot be exactly one topic level (a device id, a control group), or nil.
    package static func levelProblem(_ name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if name.count > 64 { return "is longer than 64 characters" }
        if name.contains(where: { "/+#".contains($0) }) {
            return "contains / + or #, which would change the topic levels"
        }
        return encodingProblem(name)
    }

    /// Why `text` cannot be an MQTT string (§1.5.4), or nil.
    package static func encodingProblem(_ text: String) -> String? {
        if text.utf8.contains(0) { return "contains a NUL character" }
        if text.utf8.count > maximumBytes { return "is longer than MQTT's 65535 bytes" }
        return nil
    }

    /// MQTT's limit on a topic name, bytes of UTF-8.
    package static let maximumBytes = 65_535

    private static func problem(_ topic: String, configured: Bool) -> String? {
        if topic.isEmpty { return "is empty" }
        if topic.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }) {
            return "contains an MQTT wildcard (+ or #)"
        }
        if configured {
            if topic.hasPrefix("$") { return "starts with $, which brokers reserve ($SYS)" }
            if topic.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
                return "has an empty topic level (a leading, trailing or doubled /)"
            }
        }
        return encodingProblem(topic)
    }
}
