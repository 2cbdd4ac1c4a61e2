import AgentPorts
internal import CMosquitto

extension MosquittoClient {
    /// MQTT's Remaining Length tops out at 268,435,455 bytes (MQTT 5 §1.5.5); the payload shares it with the
    /// topic and header, and libmosquitto answers MOSQ_ERR_PAYLOAD_SIZE past it.
    static let maximumPayloadBytes = 268_435_455
    /// The largest packet MQTT can express: that Remaining Length plus the fixed header's 5 bytes.
    static let largestPacketSize = 268_435_460
    /// A Maximum Packet Size below this leaves no room for a message worth receiving (a CONNACK with its
    /// properties alone can take tens of bytes).
    static let smallestPacketSizeLimit = 128

    /// Options are checked before anything touches libmosquitto, with the config key to fix.
    static func validate(_ options: BrokerConnectOptions) throws(BrokerError) {
        func invalid(_ message: String) -> BrokerError {
            BrokerError(operation: "connect", code: Int(MosquittoError.invalid), message: message)
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
        if let size = options.maximumPacketSize, !(smallestPacketSizeLimit...largestPacketSize).contains(size) {
            throw invalid(
                "a maximum packet size of \(size) bytes is outside \(smallestPacketSizeLimit)…\(largestPacketSize) (MQTT 5 §3.1.2.11.4: the Remaining Length's limit plus its header)"
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

    /// Everything set once per handle, before its first connect. A handle is reused only for equal options.
    static func configure(_ handle: MosquittoHandle, _ options: BrokerConnectOptions) throws(BrokerError) {
        let mosq = handle.pointer
        func check(_ rc: Int32, _ what: String, hint: String = "") throws(BrokerError) {
            guard rc == MosquittoError.success else {
                throw BrokerError(
                    operation: "configure MQTT client",
                    code: Int(rc),
                    message: "\(what): \(MosquittoLibrary.errorText(rc))\(hint.isEmpty ? "" : " — \(hint)")"
                )
            }
        }
        // Publishes from other threads must only queue and wake the loop (lib/packet_mosq.c packet__queue
        // writes to the socket itself unless the handle is threaded).
        try check(mosquitto_threaded_set(mosq, true), "threaded mode")
        try configureProtocol(handle, options)
        // Telemetry is many small messages: with Nagle's algorithm on, a message waits for the previous one's
        // ACK and latency p99 was ~32 ms on loopback (motion-bench latency); with TCP_NODELAY it is < 1 ms.
        try check(mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
        MosquittoConnection.installCallbacks(on: mosq)

        if let username = options.username {
            let rc = username.withCString { user in
                if let password = options.password {
                    password.withCString { mosquitto_username_pw_set(mosq, user, $0) }
                } else {
                    mosquitto_username_pw_set(mosq, user, nil)
                }
            }
            try check(rc, "user name and password", hint: "check mqtt.username and mqtt.password_file in config.yaml")
        }

        try configureWill(handle, options)

        if let tls = options.tls {
            // Without a CA file, trust the system store (Debian: /etc/ssl/certs, hashed by update-ca-certificates).
            let capath: String? = tls.caFile == nil ? "/etc/ssl/certs" : nil
            let rc = withOptionalCString(tls.caFile) { caFile in
                withOptionalCString(capath) { caPath in
                    withOptionalCString(tls.certFile) { certFile in
                        withOptionalCString(tls.keyFile) { keyFile in
                            mosquitto_tls_set(mosq, caFile, caPath, certFile, keyFile, nil)
                        }
                    }
                }
            }
            try check(
                rc,
                "TLS files",
                hint: "check mqtt.tls.ca_file, mqtt.tls.cert_file and mqtt.tls.key_file in config.yaml"
            )
            // SSL_VERIFY_PEER (1); "tlsv1.2" makes libmosquitto disable SSLv3, TLS 1.0 and 1.1 (lib/net_mosq.c),
            // so TLS 1.2 is the minimum and 1.3 stays available.
            try check(mosquitto_tls_opts_set(mosq, 1, "tlsv1.2", nil), "TLS options")
        }
    }

    /// Whether `next` may reuse the handle made for `previous`: everything but the server and the protocol
    /// version is set once per handle.
    static func sameSession(_ previous: BrokerConnectOptions, _ next: BrokerConnectOptions) -> Bool {
        var previous = previous
        previous.host = next.host
        previous.port = next.port
        previous.protocolVersion = next.protocolVersion
        // The agent makes its will afresh for every connection (its time orders it among the births): a new will
        // is set on the handle, not a reason for a new one — a new handle would drop the QoS > 0 messages in
        // flight, which the old one resends on the next connection.
        previous.will = next.will
        return previous == next
    }

    /// The will of the next connection (none: cleared); libmosquitto sends it in CONNECT.
    static func configureWill(_ handle: MosquittoHandle, _ options: BrokerConnectOptions) throws(BrokerError) {
        let mosq = handle.pointer
        guard let will = options.will else {
            _ = mosquitto_will_clear(mosq)
            return
        }
        let rc = will.topic.withCString { topic in
            will.payload.withUnsafeBytes { payload in
                mosquitto_will_set_v5(
                    mosq,
                    topic,
                    Int32(payload.count),
                    payload.baseAddress,
                    Int32(will.qos),
                    will.retain,
                    nil
                )
            }
        }
        guard rc == MosquittoError.success else {
            throw BrokerError(
                operation: "configure MQTT client",
                code: Int(rc),
                message: "will on \(will.topic): \(MosquittoLibrary.errorText(rc))"
            )
        }
    }

    /// The protocol version and the in-flight window that goes with it; libmosquitto reads both at connect.
    static func configureProtocol(_ handle: MosquittoHandle, _ options: BrokerConnectOptions) throws(BrokerError) {
        let mosq = handle.pointer
        func check(_ rc: Int32, _ what: String) throws(BrokerError) {
            guard rc == MosquittoError.success else {
                throw BrokerError(
                    operation: "configure MQTT client",
                    code: Int(rc),
                    message: "\(what): \(MosquittoLibrary.errorText(rc))"
                )
            }
        }
        let version = options.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try check(mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, version), "protocol version")
        if options.protocolVersion == .v5 {
            // MQTT 5: our Receive Maximum towards the broker; the broker's CONNACK may lower it.
            try check(
                mosquitto_int_option(mosq, MOSQ_OPT_SEND_MAXIMUM, Int32(options.maxInflightMessages)),
                "in-flight window"
            )
        } else {
            // mosquitto.h: MOSQ_OPT_SEND_MAXIMUM "is not valid for MQTT v3.1 or v3.1.1 clients".
            try check(
                mosquitto_max_inflight_messages_set(mosq, UInt32(options.maxInflightMessages)),
                "in-flight window"
            )
        }
    }

    /// MQTT 5 CONNECT properties; nil on MQTT 3.1.1, which has none (libmosquitto refuses them there).
    ///
    /// A persistent session asks for a Session Expiry Interval (0xFFFFFFFF, "does not expire", MQTT 5
    /// §3.1.2.11.2, unless mqtt.session_expiry_s says otherwise): with the default 0 the broker would discard the
    /// session at disconnect despite Clean Start being 0, unlike MQTT 3.1.1 where clean_session=false alone
    /// persists. A `maximumPacketSize` is sent as the Maximum Packet Size (§3.1.2.11.4): the broker then discards
    /// larger messages for this client instead of sending them.
    static func connectProperties(_ options: BrokerConnectOptions) throws(BrokerError) -> MosquittoProperties? {
        guard options.protocolVersion == .v5, !options.cleanSession || options.maximumPacketSize != nil else {
            return nil
        }
        let properties = MosquittoProperties()
        if !options.cleanSession {
            try properties.addInt32(
                MQTT_PROP_SESSION_EXPIRY_INTERVAL,
                options.sessionExpirySeconds == 0 ? UInt32.max : options.sessionExpirySeconds,
                operation: "connect"
            )
        }
        if let size = options.maximumPacketSize {
            try properties.addInt32(MQTT_PROP_MAXIMUM_PACKET_SIZE, UInt32(clamping: size), operation: "connect")
        }
        return properties
    }

    static func checkQueueRoom(_ outstanding: OutstandingMessages, qos: Int, limit: Int) throws(BrokerError) {
        let queued = qos == 0 ? outstanding.unwrittenQoS0 : outstanding.awaitingAcknowledgement
        if queued >= limit { throw queueFull }
    }

    static func record(_ messageID: Int32, qos: Int, in outstanding: inout OutstandingMessages) {
        if qos == 0 {
            outstanding.addQoS0()
        } else {
            outstanding.addAwaitingAcknowledgement(messageID)
        }
    }

    // Errors on the publish path use literal sentences, so refusing a message allocates nothing.
    static func notConnected(operation: String) -> BrokerError {
        BrokerError(
            operation: operation,
            code: Int(MosquittoError.noConnection),
            message: "not connected to the broker — wait for the .connected event"
        )
    }

    static let queueFull = BrokerError(
        operation: "publish",
        code: Int(MosquittoError.noMemory),
        message:
            "the queue of messages waiting for the broker is full — the broker or the network is not keeping up; this message was dropped"
    )

    static let payloadTooLarge = BrokerError(
        operation: "publish",
        code: Int(MosquittoError.payloadSize),
        message: "the payload exceeds MQTT's 268435455-byte limit",
        isPermanent: true
    )

    static func invalidQoS(operation: String) -> BrokerError {
        BrokerError(
            operation: operation,
            code: Int(MosquittoError.invalid),
            message: "QoS must be 0, 1 or 2",
            isPermanent: true
        )
    }

    static func libraryError(operation: String, _ rc: Int32) -> BrokerError {
        BrokerError(
            operation: operation,
            code: Int(rc),
            message: MosquittoLibrary.errorText(rc),
            isPermanent: MosquittoError.isPermanent(rc)
        )
    }
}

private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    if let string { return string.withCString(body) }
    return body(nil)
}
