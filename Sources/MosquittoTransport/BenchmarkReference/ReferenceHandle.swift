internal import CMosquitto

/// What the bare publisher and subscriber do alike with their libmosquitto handle: connect in threaded mode
/// (`mosquitto_loop_start`, libmosquitto's own network thread) and shut down.
enum ReferenceHandle {
    /// Starts connecting and the network thread; CONNACK arrives later, in the connect callback.
    static func connect(_ mosq: OpaquePointer, host: String, port: Int, client: String) throws {
        var rc = mosquitto_connect_bind_v5(mosq, host, Int32(port), 30, nil, nil)
        if rc == MOSQ_ERR_SUCCESS.rawValue { rc = mosquitto_loop_start(mosq) }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw BenchmarkReferenceError(
                description: "the \(client) could not connect to \(host):\(port): \(MosquittoLibrary.errorText(rc)) "
                    + "— is the broker up?"
            )
        }
    }

    /// Disconnects, stops the network thread — the callbacks have run for the last time when it returns — and
    /// frees the handle.
    static func close(_ mosq: OpaquePointer) {
        _ = mosquitto_disconnect(mosq)
        _ = mosquitto_loop_stop(mosq, false)
        mosquitto_destroy(mosq)
    }
}
