/// What went wrong at the Sparkplug boundary — a configuration value, an inbound message, our own stored bytes —
/// in one sentence that names the problem and what is accepted.
package struct SparkplugError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: String, Sendable, Equatable {
        /// A group, edge node, device or host id the topic namespace cannot carry.
        case invalidIdentifier
        /// A topic that is not a Sparkplug B topic of the expected form.
        case invalidTopic
        /// A payload that does not decode (protobuf, or the STATE JSON).
        case malformedPayload
        /// A command that decodes but cannot be applied (unknown metric, wrong type, not writable, refused).
        case refusedCommand
        /// Catalog definitions that contradict each other (duplicate names or devices).
        case invalidCatalog
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
