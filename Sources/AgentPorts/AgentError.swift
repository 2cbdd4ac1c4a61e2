/// An error of the agent's own, with a sentence that says what to do.
package struct AgentError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}
