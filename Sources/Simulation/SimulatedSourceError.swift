import AgentPorts

/// A misuse of `SimulatedSensorSource`, with a sentence that names the problem and the fix.
package struct SimulatedSourceError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: String, Sendable {
        case invalidRate
        case unknownDevice
        case alreadyRunning
        case threadStartFailed
        case unknownScenario
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
