import AgentPorts

/// A misuse of `SimulatedSensorSource`, with a sentence that names the problem and the fix.
public struct SimulatedSourceError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidRate
        case unknownDevice
        case alreadyRunning
        case threadStartFailed
        case unknownScenario
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
