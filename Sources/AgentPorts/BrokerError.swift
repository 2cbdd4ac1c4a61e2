/// An error from the MQTT client, with the library's text and what to do about it.
package struct BrokerError: Error, Sendable, Hashable, CustomStringConvertible {
    package var operation: String
    package var code: Int
    package var message: String
    /// The message itself can never be sent (bad topic, payload too large, QoS the broker refuses): retrying
    /// is pointless, so the outbox drops and counts it instead of letting it block the queue. The client
    /// decides, since only it knows its library's error codes.
    package var isPermanent: Bool

    package init(operation: String, code: Int, message: String, isPermanent: Bool = false) {
        self.operation = operation
        self.code = code
        self.message = message
        self.isPermanent = isPermanent
    }

    package var description: String { "\(operation) failed: \(message)" }
}
