/// Where a client is in its connection's life, kept in an atomic so `isConnected` and the callbacks read it
/// without a lock.
///
/// `.connected` and `.closing` are stored from the network thread (on_connect, on_disconnect) without the
/// client's lock: a publish racing a dropped connection simply gets libmosquitto's answer (MOSQ_ERR_NO_CONN
/// for QoS 0; QoS > 0 is queued and resent on the next connection). The moves that matter for memory safety
/// — `.idle → .connecting` in `connect` and back to `.idle` when the network thread is done with the handle —
/// happen under `MosquittoClientCore.locked`, which every publish/subscribe also holds across its libmosquitto
/// call; so no caller is inside libmosquitto while a new connection resets the handle.
enum ConnectionPhase: UInt8 {
    /// No network thread; `connect` may start one.
    case idle
    /// A network thread is connecting (TCP, TLS, CONNACK).
    case connecting
    /// CONNACK accepted: publish and subscribe are allowed.
    case connected
    /// The connection ended; the network thread is tearing down and will report it.
    case closing
}
