import AgentPorts

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sentences for everything that can end a connection, each naming the endpoint, the library's or the
/// broker's reason and what to change. Config keys are those of config.yaml (`mqtt.host`, `mqtt.port`, …).
enum MosquittoReasons {
    static let brokerHint = "check mqtt.host and mqtt.port in config.yaml, or that the broker is running"

    /// `mosquitto_connect_bind_v5` itself failed: DNS, TCP or TLS set-up, before any MQTT packet.
    static func connectCallFailed(_ rc: Int32, errno savedErrno: Int32, endpoint: String) -> String {
        switch rc {
        case MosquittoError.errno:
            return "connect to \(endpoint) failed: \(systemText(savedErrno)) — \(brokerHint)"
        case MosquittoError.lookup:
            return
                "connect to \(endpoint) failed: the host name could not be resolved — check mqtt.host in config.yaml and the DNS settings"
        case MosquittoError.tls, MosquittoError.tlsHandshake:
            return
                "connect to \(endpoint) failed: \(MosquittoLibrary.errorText(rc)) — check mqtt.tls.ca_file, mqtt.tls.cert_file and mqtt.tls.key_file in config.yaml, and that mqtt.port is the broker's TLS listener"
        default:
            return "connect to \(endpoint) failed: \(MosquittoLibrary.errorText(rc)) — \(brokerHint)"
        }
    }

    /// The socket opened but the connection ended before a CONNACK (TLS handshake, broker closed it).
    /// MQTT 5 reason code 0x84, Unsupported Protocol Version; libmosquitto also reports a 3.1.1 broker's CONNACK
    /// return code 1 to an MQTT 5 CONNECT with it (lib/handle_connack.c).
    static let unsupportedProtocolVersion: Int32 = 0x84

    static func closedOnMQTT5Connect(endpoint: String, tls: Bool) -> String {
        let tlsHint =
            tls
            ? "; or the broker refused the TLS client (check mqtt.tls.ca_file, mqtt.tls.cert_file and "
                + "mqtt.tls.key_file in config.yaml)"
            : ""
        return "connect to \(endpoint) failed: the broker closed the connection on the MQTT 5 CONNECT without "
            + "answering, as brokers without MQTT 5 do (RabbitMQ 3.x) — set mqtt.protocol to auto (or v311) in "
            + "config.yaml\(tlsHint)"
    }

    static func endedBeforeConnack(_ rc: Int32, errno savedErrno: Int32, endpoint: String) -> String {
        if rc == MosquittoError.tls || rc == MosquittoError.tlsHandshake {
            return
                "connect to \(endpoint) failed: TLS handshake failed (the broker's certificate is not signed by the trusted CA or does not name this host, or the listener does not speak TLS) — check mqtt.tls.ca_file, mqtt.tls.cert_file and mqtt.tls.key_file in config.yaml, and that mqtt.port is the broker's TLS listener"
        }
        let text = rc == MosquittoError.errno ? systemText(savedErrno) : MosquittoLibrary.errorText(rc)
        return
            "connect to \(endpoint) failed before the broker answered: \(text) — check that mqtt.port is an MQTT listener, and mqtt.tls.* in config.yaml if that listener uses TLS"
    }

    /// CONNACK refused. Returns the sentence and whether the refusal is about credentials or identity
    /// (MQTT 5: 0x85, 0x86, 0x87, 0x8C; MQTT 3.1.1: 2, 4, 5), which calls for a long back-off.
    static func connackRefused(
        _ code: Int32,
        protocolVersion: MQTTProtocolVersion,
        endpoint: String
    ) -> (reason: String, isAuthorization: Bool) {
        let (text, hint, isAuthorization) =
            protocolVersion == .v5 ? v5Refusal(code) : v311Refusal(code)
        let codeText =
            protocolVersion == .v5 ? "reason code 0x\(String(code, radix: 16, uppercase: true))" : "return code \(code)"
        return ("connect to \(endpoint) refused by the broker: \(text) (\(codeText)) — \(hint)", isAuthorization)
    }

    private static func v5Refusal(_ code: Int32) -> (String, String, Bool) {
        let credentials = "check mqtt.username and mqtt.password_file in config.yaml against the broker's password file"
        switch code {
        case 0x84:
            return (
                "unsupported protocol version",
                "set mqtt.protocol to v311 in config.yaml, or upgrade the broker to one that speaks MQTT 5", false
            )
        case 0x85:
            return (
                "client identifier not valid",
                "check mqtt.client_id in config.yaml (the broker may restrict its length or characters)", true
            )
        case 0x86: return ("bad user name or password", credentials, true)
        case 0x87:
            return (
                "not authorized",
                "check mqtt.username and mqtt.password_file in config.yaml, and that the broker allows this user (or anonymous clients)",
                true
            )
        case 0x8A: return ("banned", "ask the broker's operator why this client is banned", false)
        case 0x8C: return ("bad authentication method", credentials, true)
        case 0x88, 0x89, 0x9F:
            return (
                MosquittoLibrary.reasonText(code).lowercased(),
                "the broker is overloaded or restarting; the agent retries after its back-off", false
            )
        case 0x9C, 0x9D:
            return (
                MosquittoLibrary.reasonText(code).lowercased(),
                "the agent goes to a server the broker names (MQTT 5 Server Reference) only when mqtt.servers lists "
                    + "it; otherwise point mqtt.host and mqtt.port (or mqtt.servers) in config.yaml at the broker's new "
                    + "address",
                false
            )
        default:
            return (
                MosquittoLibrary.reasonText(code).lowercased(),
                "see the broker's log for why it refused the connection", false
            )
        }
    }

    private static func v311Refusal(_ code: Int32) -> (String, String, Bool) {
        switch code {
        case 1:
            return (
                "unacceptable protocol version", "set mqtt.protocol in config.yaml to a version the broker speaks",
                false
            )
        case 2:
            return (
                "identifier rejected",
                "check mqtt.client_id in config.yaml (MQTT 3.1.1 brokers may only accept 1–23 letters and digits)", true
            )
        case 3:
            return (
                "server unavailable", "the broker is not accepting clients; the agent retries after its back-off", false
            )
        case 4:
            return (
                "bad user name or password",
                "check mqtt.username and mqtt.password_file in config.yaml against the broker's password file", true
            )
        case 5:
            return (
                "not authorized",
                "check mqtt.username and mqtt.password_file in config.yaml, and that the broker allows this user (or anonymous clients)",
                true
            )
        default: return ("unknown return code", "see the broker's log for why it refused the connection", false)
        }
    }

    /// An established connection ended without our asking. `code` is on_disconnect's: a MOSQ_ERR_* value,
    /// or an MQTT 5 reason code (≥ 0x80) when the broker sent DISCONNECT.
    static func connectionLost(
        _ code: Int32,
        errno savedErrno: Int32,
        keepaliveSeconds: Int,
        endpoint: String
    ) -> String {
        if code >= 0x80 {
            let hint =
                code == 0x8E
                ? " — another client connected with the same mqtt.client_id"
                : ""
            return
                "connection to \(endpoint) closed by the broker: \(MosquittoLibrary.reasonText(code)) (reason code 0x\(String(code, radix: 16, uppercase: true)))\(hint)"
        }
        switch code {
        case MosquittoError.keepalive:
            return
                "connection to \(endpoint) lost: no answer from the broker within the keepalive of \(keepaliveSeconds) s"
        case MosquittoError.errno:
            return "connection to \(endpoint) lost: \(systemText(savedErrno))"
        case MosquittoError.protocolError:
            return
                "connection to \(endpoint) lost: the broker broke the MQTT protocol (\(MosquittoLibrary.errorText(code))) — a broker without QoS 2 (RabbitMQ 3.x) answers a QoS 2 message with PUBACK: keep streams.*.qos at 0 or 1 with it"
        default:
            return "connection to \(endpoint) lost: \(MosquittoLibrary.errorText(code))"
        }
    }

    static func systemText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
