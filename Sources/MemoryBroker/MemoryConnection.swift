import AgentPorts

/// One network connection between a client and a broker: two wires (each a TCP direction, with the socket
/// buffers of both ends) and what each end knows of it.
struct MemoryConnection: Sendable {
    let id: Int
    /// Index of the client in the network (creation order).
    let client: Int
    /// Index of the broker listening on the address the client dialled; nil: nobody listens there.
    let broker: Int?
    let options: BrokerConnectOptions
    /// Client → broker.
    var up = FIFO<Packet>()
    /// Broker → client.
    var down = FIFO<Packet>()
    /// Packets put on `down` since pump `downPump` began (the client has not had a turn to read them yet).
    var downPump: UInt64 = 0
    var downRecent = 0
    /// The broker accepted the CONNECT and attached the session `sessionClientID`.
    var accepted = false
    var sessionClientID: String?
    /// The client has given its terminal event (it sent DISCONNECT): it reads nothing more.
    var clientEnded = false
    /// A stalled direction moves nothing until resumed (a frozen peer, a full window on a stuck network).
    var stalledUp = false
    var stalledDown = false

    var endpoint: String { "\(options.host):\(options.port)" }
}
