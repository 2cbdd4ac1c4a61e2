/// Receives the broker's acknowledgements (PUBACK / PUBCOMP) of QoS > 0 messages, on their own path: straight
/// from the client's network thread, never through `BrokerClient.events`, so no amount of inbound traffic can
/// delay or drop them (a dropped acknowledgement would leave a publishing window counted full and a durable
/// cursor stuck).
package protocol BrokerAcknowledgementHandler: AnyObject, Sendable {
    /// The broker acknowledged these message ids (one network-loop turn's worth, in order). Called on the
    /// network thread: take short locks only, never wait on I/O or on the network, and do not call back into
    /// the client's `disconnect`. The slice is only valid for the call.
    func brokerAcknowledged(_ messageIDs: ArraySlice<Int32>)
}
