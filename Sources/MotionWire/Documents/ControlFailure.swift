/// Why a command was refused: what kind of problem it is and a sentence saying what was wrong and what is
/// accepted. The wire code (400, 401, …) is not chosen here but at the door, by `ControlReply.code(for:)`.
public struct ControlFailure: Error, Sendable, Equatable {
    public enum Kind: Sendable, Equatable, CaseIterable {
        /// Not JSON, not an object, not UTF-8, mistyped or missing arguments, absurd values.
        case malformed
        /// Larger than `control.max_payload_bytes`.
        case tooLarge
        /// Unsigned, tampered, stale or replayed while signing is on.
        case unauthorized
        /// An unknown command or stream.
        case unknown
        /// The command is valid but cannot be carried out now (hardware, configuration, history).
        case conflict
        /// Older than `control.max_age_seconds`.
        case expired
        /// Beyond the rate limit.
        case rateLimited
        /// Failed inside the agent.
        case internalFailure
    }

    public var kind: Kind
    public var id: String?
    public var message: String

    public init(_ kind: Kind, id: String? = nil, _ message: String) {
        self.kind = kind
        self.id = id
        self.message = message
    }
}
