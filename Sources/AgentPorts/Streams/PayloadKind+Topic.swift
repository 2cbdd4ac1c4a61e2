extension PayloadKind {
    /// The topic that carries this payload, and the stream that publishes it.
    package var topic: StreamDescriptor.Topic { StreamDescriptor.topic(of: self) }

    /// The stream that publishes this payload.
    package var stream: StreamName { StreamDescriptor.topicsByPayload[self]!.stream }

    /// The topic's subject under the device's root.
    package var subject: TopicScheme.Subject { .payload(self) }

    /// The payload carried by `subject`'s topic; nil for status, metrics, control and desired state.
    public init?(subject: TopicScheme.Subject) {
        guard case .payload(let kind) = subject else { return nil }
        self = kind
    }
}
