extension MosquittoBroker.Options {
    /// The benchmarks' broker: unlimited queues, since the subscriber must see every message or the counts
    /// would not prove delivery, and mosquitto's own defaults otherwise.
    ///
    /// - Parameter tcpNoDelay: the broker's `set_tcp_nodelay` (mosquitto's default: off, Nagle on).
    package static func benchmark(tcpNoDelay: Bool = false) -> Self {
        Self(
            extraConfiguration: [
                "set_tcp_nodelay \(tcpNoDelay)",
                "max_queued_messages 0",
                "max_inflight_messages 100",
            ]
        )
    }
}
