import AgentPorts
internal import CMosquitto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns one `struct mosquitto *`.
///
/// mosquitto.h, mosquitto_new: "Returns: Pointer to a struct mosquitto on success. NULL on failure.
/// Interrogate errno to determine the cause"; mosquitto_destroy: "Use to free memory associated with a
/// mosquitto client instance." So a successful `init` is paired with exactly one `mosquitto_destroy` in
/// `deinit`, after the last call that uses the pointer: every user (the client, a connection's network
/// thread) keeps this object alive while it calls into the library.
///
/// mosquitto_new also calls `signal(SIGPIPE, SIG_IGN)` (lib/mosquitto.c), process-wide: writes to a dead
/// socket anywhere in the process return EPIPE instead of killing it from the first client on.
///
/// `@unchecked Sendable`: the pointer is shared between the publishing threads and the network thread.
/// libmosquitto guards publish/subscribe against its own loop once `mosquitto_threaded_set(true)` is on;
/// everything else (configuration, connect, disconnect) happens on one thread at a time, ordered by the
/// client's lock and its connection phase.
final class MosquittoHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    /// - Parameters:
    ///   - clientID: `nil` lets libmosquitto (v3.1.1) or the broker (v5) pick one; then the session must be clean.
    init(clientID: String?, cleanSession: Bool) throws(BrokerError) {
        MosquittoLibrary.ensureInitialized()
        let created: OpaquePointer?
        if let clientID {
            created = clientID.withCString { mosquitto_new($0, cleanSession, nil) }
        } else {
            created = mosquitto_new(nil, cleanSession, nil)
        }
        guard let created else {
            let code = errno
            if code == EINVAL {
                throw BrokerError(
                    operation: "create MQTT client",
                    code: Int(MosquittoError.invalid),
                    message: "a persistent session needs a client id — set mqtt.client_id in config.yaml"
                )
            }
            throw BrokerError(
                operation: "create MQTT client",
                code: Int(MosquittoError.noMemory),
                message: "mosquitto_new returned NULL: \(String(cString: strerror(code)))"
            )
        }
        pointer = created
    }

    deinit {
        mosquitto_destroy(pointer)
    }
}
