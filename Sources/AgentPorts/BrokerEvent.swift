/// What happens on the connection, in order, as the client's network thread sees it.
package enum BrokerEvent: Sendable, Hashable {
    /// CONNACK accepted.
    case connected(sessionPresent: Bool)
    /// The attempt failed (TCP, TLS or a CONNACK refusal). `code` is the MQTT reason code or the library's
    /// error number; `reason` is a sentence for the log. `isAuthorization` marks refused credentials or
    /// client ids, which call for a long back-off.
    case connectFailed(code: Int, reason: String, isAuthorization: Bool)
    /// The broker named another server to use (the MQTT 5 Server Reference of a CONNACK with reason 0x9C "use
    /// another server" or 0x9D "server moved"), as written by the broker; the attempt's terminal event follows.
    case serverReference(String)
    /// An established connection ended; `expected` when we asked for it.
    case disconnected(reason: String, expected: Bool)
    /// A message arrived on a subscription. (Acknowledgements of published messages go to the client's
    /// `BrokerAcknowledgementHandler` instead, on a path inbound messages cannot block.)
    case message(InboundMessage)
}
