/// An error of the agent's own, with a sentence that says what to do.
public struct AgentError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
