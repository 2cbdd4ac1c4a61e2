internal import CMosquitto

/// `MOSQ_ERR_*` values as plain `Int32`s, the type every libmosquitto call returns.
enum MosquittoError {
    static let success = Int32(MOSQ_ERR_SUCCESS.rawValue)
    static let noMemory = Int32(MOSQ_ERR_NOMEM.rawValue)
    static let invalid = Int32(MOSQ_ERR_INVAL.rawValue)
    static let noConnection = Int32(MOSQ_ERR_NO_CONN.rawValue)
    static let connectionLost = Int32(MOSQ_ERR_CONN_LOST.rawValue)
    static let tls = Int32(MOSQ_ERR_TLS.rawValue)
    static let payloadSize = Int32(MOSQ_ERR_PAYLOAD_SIZE.rawValue)
    static let errno = Int32(MOSQ_ERR_ERRNO.rawValue)
    static let lookup = Int32(MOSQ_ERR_EAI.rawValue)
    static let keepalive = Int32(MOSQ_ERR_KEEPALIVE.rawValue)
    static let tlsHandshake = Int32(MOSQ_ERR_TLS_HANDSHAKE.rawValue)
    static let protocolError = Int32(MOSQ_ERR_PROTOCOL.rawValue)
    static let connectionRefused = Int32(MOSQ_ERR_CONN_REFUSED.rawValue)

    /// Codes that say "this message can never be sent", whatever the connection does (mosquitto.h, 2.0.11).
    static func isPermanent(_ rc: Int32) -> Bool {
        rc == invalid || rc == payloadSize || rc == Int32(MOSQ_ERR_MALFORMED_UTF8.rawValue)
            || rc == Int32(MOSQ_ERR_QOS_NOT_SUPPORTED.rawValue) || rc == Int32(MOSQ_ERR_OVERSIZE_PACKET.rawValue)
    }
}
