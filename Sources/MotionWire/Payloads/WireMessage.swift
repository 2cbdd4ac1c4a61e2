/// One decoded sample of a stream topic: a single message holds one, a batch many.
public struct WireMessage: Sendable, Equatable {
    public var envelope: MessageEnvelope
    public var payload: StreamPayload

    public init(envelope: MessageEnvelope, payload: StreamPayload) {
        self.envelope = envelope
        self.payload = payload
    }
}
