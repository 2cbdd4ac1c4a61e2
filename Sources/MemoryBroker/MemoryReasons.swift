import AgentPorts

/// The sentences and codes MemoryBrokerClient reports, worded as MosquittoClient words them (MosquittoReasons), so
/// the agent logs and decides the same on either. Codes are libmosquitto's MOSQ_ERR_* values or MQTT reason codes.
enum MemoryReasons {
    /// MOSQ_ERR_ERRNO, with errno ECONNREFUSED.
    static let refusedCode = 14
    /// MOSQ_ERR_CONN_LOST.
    static let connectionLostCode = 7
    /// MOSQ_ERR_NO_CONN.
    static let notConnectedCode = 4
    /// MOSQ_ERR_INVAL.
    static let invalidCode = 3
    /// MOSQ_ERR_NOMEM: what MosquittoClient's queue bound reports.
    static let queueFullCode = 1
    /// MOSQ_ERR_PAYLOAD_SIZE.
    static let payloadSizeCode = 9

    static let brokerHint = "check mqtt.host and mqtt.port in config.yaml, or that the broker is running"

    static func refused(_ endpoint: String) -> String {
        "connect to \(endpoint) failed: Connection refused — \(brokerHint)"
    }

    static func lost(_ endpoint: String) -> String {
        "connection to \(endpoint) lost: The connection was lost"
    }

    static func endedBeforeConnack(_ endpoint: String) -> String {
        "connect to \(endpoint) failed before the broker answered: The connection was lost — check that mqtt.port is an MQTT listener, and mqtt.tls.* in config.yaml if that listener uses TLS"
    }

    static func requested(_ endpoint: String) -> String {
        "disconnected from \(endpoint) as requested"
    }

    static func cancelled(_ endpoint: String) -> String {
        "connect to \(endpoint) cancelled by disconnect() before the broker accepted it"
    }

    /// A CONNACK refusal: the sentence and whether it is about credentials (a long back-off).
    static func connackRefused(
        _ code: Int,
        protocolVersion: MQTTProtocolVersion,
        endpoint: String
    ) -> (reason: String, isAuthorization: Bool) {
        let credentials = "check mqtt.username and mqtt.password_file in config.yaml against the broker's password file"
        let allowed =
            "check mqtt.username and mqtt.password_file in config.yaml, and that the broker allows this user (or anonymous clients)"
        let (text, hint, isAuthorization): (String, String, Bool) =
            switch (protocolVersion, code) {
            case (.v5, 0x86), (.v311, 4): ("bad user name or password", credentials, true)
            case (.v5, 0x87), (.v311, 5): ("not authorized", allowed, true)
            default: ("refused", "see the broker's log for why it refused the connection", false)
            }
        let codeText =
            protocolVersion == .v5 ? "reason code 0x\(String(code, radix: 16, uppercase: true))" : "return code \(code)"
        return ("connect to \(endpoint) refused by the broker: \(text) (\(codeText)) — \(hint)", isAuthorization)
    }

    static func notConnected(operation: String) -> BrokerError {
        BrokerError(
            operation: operation,
            code: notConnectedCode,
            message: "not connected to the broker — wait for the .connected event"
        )
    }

    static let busy = BrokerError(
        operation: "connect",
        code: invalidCode,
        message:
            "a connection is already open or being opened — wait for its .disconnected or .connectFailed event, or call disconnect(flushTimeout:) first"
    )

    static let queueFull = BrokerError(
        operation: "publish",
        code: queueFullCode,
        message:
            "the queue of messages waiting for the broker is full — the broker or the network is not keeping up; this message was dropped"
    )

    static let payloadTooLarge = BrokerError(
        operation: "publish",
        code: payloadSizeCode,
        message: "the payload exceeds MQTT's 268435455-byte limit",
        isPermanent: true
    )

    static func invalidQoS(operation: String) -> BrokerError {
        BrokerError(operation: operation, code: invalidCode, message: "QoS must be 0, 1 or 2", isPermanent: true)
    }

    static func invalid(operation: String) -> BrokerError {
        BrokerError(
            operation: operation,
            code: invalidCode,
            message: "Invalid function arguments provided.",
            isPermanent: true
        )
    }

    static func killed(operation: String) -> BrokerError {
        BrokerError(
            operation: operation,
            code: notConnectedCode,
            message: "the process holding this client was killed (MemoryBrokerClient.kill()) — make a new client"
        )
    }

    /// MosquittoClient's rule for reusing its libmosquitto handle: everything but the server, the protocol version
    /// and the will must be equal; only then are the QoS > 0 messages in flight resent on the next connection.
    static func sameSession(_ previous: BrokerConnectOptions, _ next: BrokerConnectOptions) -> Bool {
        var previous = previous
        previous.host = next.host
        previous.port = next.port
        previous.protocolVersion = next.protocolVersion
        previous.will = next.will
        return previous == next
    }

    /// MosquittoClient's checks before any network activity, with the same sentences.
    static func validate(_ options: BrokerConnectOptions) throws(BrokerError) {
        func invalid(_ message: String) -> BrokerError {
            BrokerError(operation: "connect", code: invalidCode, message: message)
        }
        if options.host.isEmpty {
            throw invalid("the broker host is empty — set mqtt.host in config.yaml")
        }
        if !(1...65535).contains(options.port) {
            throw invalid("port \(options.port) is not a TCP port — set mqtt.port in config.yaml to 1…65535")
        }
        if options.keepaliveSeconds < 5 {
            throw invalid(
                "keepalive \(options.keepaliveSeconds) s is below libmosquitto's minimum of 5 s — set mqtt.keepalive in config.yaml to 5…65535"
            )
        }
        if options.keepaliveSeconds > 65535 {
            throw invalid(
                "keepalive \(options.keepaliveSeconds) s exceeds MQTT's 65535 s — set mqtt.keepalive in config.yaml to 5…65535"
            )
        }
        if !(1...65535).contains(options.maxInflightMessages) {
            throw invalid(
                "max in-flight messages \(options.maxInflightMessages) is outside 1…65535 (an unlimited window collapses QoS 1 throughput)"
            )
        }
        if !options.cleanSession && options.clientID.isEmpty {
            throw invalid("a persistent session needs a client id — set mqtt.client_id in config.yaml")
        }
        if let size = options.maximumPacketSize, !(128...268_435_460).contains(size) {
            throw invalid(
                "a maximum packet size of \(size) bytes is outside 128…268435460 (MQTT 5 §3.1.2.11.4: the Remaining Length's limit plus its header)"
            )
        }
        if options.password != nil && options.username == nil {
            throw invalid("a password without a user name — set mqtt.username in config.yaml")
        }
        if let will = options.will {
            if !(0...2).contains(will.qos) { throw invalid("will QoS \(will.qos) is not 0, 1 or 2") }
            if will.topic.isEmpty { throw invalid("the will topic is empty") }
        }
        if let tls = options.tls, (tls.certFile == nil) != (tls.keyFile == nil) {
            throw invalid(
                "a client certificate needs both files — set both mqtt.tls.cert_file and mqtt.tls.key_file in config.yaml, or neither"
            )
        }
    }
}
