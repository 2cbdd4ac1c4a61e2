/// What re-reading config.yaml did: the streams whose settings applied at once, and the sections that changed
/// but apply only at the next start (the `reload-config` result).
public struct ReloadReport: Sendable, Equatable, Codable {
    public var changedStreams: [String]
    public var needsRestart: [String]
    public var message: String

    public init(changedStreams: [String], needsRestart: [String]) {
        self.changedStreams = changedStreams
        self.needsRestart = needsRestart
        var message =
            changedStreams.isEmpty ? "no stream changed" : "applied to: \(changedStreams.joined(separator: ", "))"
        if !needsRestart.isEmpty { message += "; restart the agent to apply: \(needsRestart.joined(separator: ", "))" }
        self.message = message
    }
}
