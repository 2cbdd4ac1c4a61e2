/// The MQTT port. One client per agent; one network thread inside it. Reconnecting is the caller's
/// decision (the agent owns the back-off), so a lost connection stays lost until `connect` is called again.
package protocol BrokerClient: AnyObject, Sendable {
    /// Every connection event and inbound message, in the order the network thread saw them. Inbound
    /// messages are bounded in count and in bytes (past either bound they are dropped and counted in
    /// `droppedInboundCount`), and each by the connection's `maximumPacketSize`; connection events never are.
    /// Acknowledgements do not come this way: see `setAcknowledgementHandler`.
    var events: AsyncStream<BrokerEvent> { get }
    /// Inbound messages dropped because the consumer of `events` fell too far behind (in messages or bytes).
    var droppedInboundCount: Int { get }
    /// Every inbound message dropped so far, by cause, with the latest topics (for the log).
    var inboundDrops: InboundDrops { get }
    /// Who receives the broker's acknowledgements of QoS > 0 messages, from the network thread. Held weakly
    /// (the handler usually owns the client); nil stops the calls.
    func setAcknowledgementHandler(_ handler: (any BrokerAcknowledgementHandler)?)
    /// Whether the connection is up (CONNACK accepted and not yet lost).
    var isConnected: Bool { get }
    /// Starts one connection attempt and returns at once; the outcome arrives on `events`.
    func connect(_ options: BrokerConnectOptions) throws(BrokerError)
    /// Sends DISCONNECT after flushing what is queued (bounded by `timeout` seconds) and stops the thread.
    func disconnect(flushTimeout: Double) async
    /// Queues a message without waiting on the network; returns its message id. `expirySeconds` > 0 sends
    /// the MQTT 5 Message Expiry Interval (ignored on MQTT 3.1.1, which has no such property); 0 sends none.
    func publish(
        topic: String,
        payload: UnsafeRawBufferPointer,
        qos: Int,
        retain: Bool,
        expirySeconds: UInt32
    ) throws(BrokerError) -> Int32
    /// Publishes an MQTT 5 response (with correlation data) — or a plain message on 3.1.1.
    func publishResponse(
        topic: String,
        payload: [UInt8],
        correlationData: [UInt8]?
    ) throws(BrokerError)
    func subscribe(_ filters: [String], qos: Int) throws(BrokerError)
}

extension BrokerClient {
    /// A client with no byte bound and no size limit drops only for being behind.
    package var inboundDrops: InboundDrops { InboundDrops(behind: droppedInboundCount) }

    /// Queues a message that never expires.
    package func publish(
        topic: String,
        payload: UnsafeRawBufferPointer,
        qos: Int,
        retain: Bool
    ) throws(BrokerError) -> Int32 {
        try publish(topic: topic, payload: payload, qos: qos, retain: retain, expirySeconds: 0)
    }
}
