/// Every topic the agent uses, built in one place from `topics.root` (with `{device}` substituted).
public struct TopicScheme: Sendable, Hashable {
    public let root: String

    public init(root: String) {
        var r = root
        while r.hasSuffix("/") { r.removeLast() }
        self.root = r
    }

    /// `{root}/accelerometer`, `{root}/gyroscope`, … — one name everywhere: config key, topic, command.
    public func stream(_ name: StreamName) -> String { "\(root)/\(name.rawValue)" }
    /// Retained birth and will: `online` / `offline` with the agent's state.
    public var status: String { "\(root)/status" }
    /// The agent's health report (`metrics.interval_s`): QoS 0, not retained.
    public var metrics: String { "\(root)/metrics" }
    public var control: String { "\(root)/control" }
    public var controlReply: String { "\(root)/control/reply" }
    /// A group's command topic, shared by every member (`control.groups`).
    public static func groupControl(_ group: String) -> String { "motion/group/\(group)/control" }
}
