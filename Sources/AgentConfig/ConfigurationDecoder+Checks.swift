import AgentPorts
import Foundation

/// Checks that need more than one value, or the file system, run after the file and the environment are
/// both applied (an environment variable may replace a file's unreadable path).
extension ConfigurationDecoder {
    mutating func apply(environment: [String: String]) {
        for override in EnvironmentOverride.all {
            // Trimmed: env files written on Windows or by `echo` often carry a stray \r or space.
            guard let text = environment[override.variable]?.trimmingCharacters(in: .whitespacesAndNewlines),
                !text.isEmpty,
                let field = ConfigurationSchema.field(at: override.keyPath),
                // Overrides replace single values; a list has no one-line spelling worth inventing.
                case .scalar(let decode, _) = field.value
            else { continue }
            variables[override.keyPath] = override.variable
            refused.remove(override.keyPath)
            // Paths from the environment are relative to the working directory, as any process's are.
            let workingDirectory = FileManager.default.currentDirectoryPath
            if let problem = decode(text, FieldContext(baseDirectory: workingDirectory), &configuration) {
                report(
                    problem.kind,
                    keyPath: override.keyPath,
                    value: text,
                    problem: problem.problem,
                    allowed: field.allowed,
                    suggestion: problem.suggestion
                )
            }
        }
    }

    mutating func checkConsistency() {
        checkReplay()
        checkCredentials()
        checkTLS()
        checkReconnectDelays()
        checkServers()
        checkDurableStreams()
        checkLocation()
        checkTrustedKeys()
        checkSparkplug()
    }

    /// Sparkplug commands carry no signature: writes through them would open a door around the signed one.
    /// (The edge node id is `device.id`, whose own rules — no / + # { }, at most 64 characters — are stricter.)
    private mutating func checkSparkplug() {
        let sparkplug = configuration.sparkplug
        if sparkplug.writes, configuration.control.trustedKeysFile != nil, !refused.contains("sparkplug.writes") {
            report(
                .conflict,
                keyPath: "sparkplug.writes",
                value: "true",
                problem: "is true while control.trusted_keys_file requires signed commands, and a Sparkplug command "
                    + "cannot carry a signature",
                allowed: "false while control.trusted_keys_file is set (or remove control.trusted_keys_file)"
            )
        }
        if let passwordFile = sparkplug.passwordFile, !refused.contains("sparkplug.password_file"),
            case .failure(let problem) = FileAccess.firstLine(of: passwordFile)
        {
            report(
                problem.kind,
                keyPath: "sparkplug.password_file",
                value: passwordFile,
                problem: problem.problem,
                allowed: "the path of a readable file whose first line is the password"
            )
        }
        if sparkplug.enabled, sparkplug.streams.isEmpty, !refused.contains("sparkplug.streams") {
            report(
                .invalidValue,
                keyPath: "sparkplug.streams",
                value: "[]",
                problem: "lists no stream while sparkplug.enabled is true: the edge node would have no device",
                allowed: "one or more of \(SparkplugSettings.streamNames.joined(separator: ", "))"
            )
        }
    }

    private mutating func checkReplay() {
        guard configuration.source.kind == .replay, !refused.contains("source.replay.file") else { return }
        guard let file = configuration.source.replay.file else {
            report(
                .missingValue,
                keyPath: "source.replay.file",
                value: nil,
                problem: "is required when source.kind is replay",
                allowed: ConfigurationSchema.field(at: "source.replay.file")?.allowed ?? "",
                line: lines["source.replay"] ?? lines["source.kind"]
            )
            return
        }
        checkReadable(file, keyPath: "source.replay.file")
    }

    private mutating func checkCredentials() {
        let mqtt = configuration.mqtt
        guard let passwordFile = mqtt.passwordFile, !refused.contains("mqtt.password_file") else { return }
        if case .failure(let problem) = FileAccess.password(at: passwordFile) {
            report(
                problem.kind,
                keyPath: "mqtt.password_file",
                value: passwordFile,
                problem: problem.problem,
                allowed: ConfigurationSchema.passwordFileAllowed
            )
        }
        // MQTT 3.1.1 §3.1.2.9: a password needs a user name (MQTT 5 dropped the rule); libmosquitto's
        // mosquitto_username_pw_set refuses it for 3.1.1 with MOSQ_ERR_INVAL.
        if mqtt.protocolVersion != .v5, mqtt.username == nil {
            report(
                .conflict,
                keyPath: "mqtt.password_file",
                value: passwordFile,
                problem: "is set without mqtt.username, which MQTT 3.1.1 does not allow",
                allowed: "set mqtt.username too, or use mqtt.protocol v5"
            )
        }
    }

    private mutating func checkTLS() {
        guard let tls = configuration.mqtt.tls else { return }
        let files = [
            ("mqtt.tls.ca_file", tls.caFile), ("mqtt.tls.cert_file", tls.certFile), ("mqtt.tls.key_file", tls.keyFile),
        ]
        for case (let keyPath, let path?) in files where !refused.contains(keyPath) {
            checkReadable(path, keyPath: keyPath)
        }
        // The private key proves the device's identity to the broker: nobody else may read or replace it.
        if let key = tls.keyFile, !refused.contains("mqtt.tls.key_file"), FileAccess.checkReadableFile(key) == nil,
            let problem = FileAccess.readableByOthers(key)
        {
            report(
                problem.kind,
                keyPath: "mqtt.tls.key_file",
                value: key,
                problem: problem.problem,
                allowed: ConfigurationSchema.field(at: "mqtt.tls.key_file")?.allowed ?? ""
            )
        }
        // libmosquitto's mosquitto_tls_set refuses a certificate without its key and the reverse, and needs
        // a CA file to verify the broker (MOSQ_ERR_INVAL).
        switch (tls.certFile, tls.keyFile) {
        case (let cert?, nil):
            report(
                .missingValue,
                keyPath: "mqtt.tls.key_file",
                value: nil,
                problem: "is missing while mqtt.tls.cert_file is set (\(cert))",
                allowed: "set both cert_file and key_file for client certificates, or neither",
                line: lines["mqtt.tls.cert_file"]
            )
        case (nil, let key?):
            report(
                .missingValue,
                keyPath: "mqtt.tls.cert_file",
                value: nil,
                problem: "is missing while mqtt.tls.key_file is set (\(key))",
                allowed: "set both cert_file and key_file for client certificates, or neither",
                line: lines["mqtt.tls.key_file"]
            )
        default: break
        }
        if tls.caFile == nil {
            report(
                .missingValue,
                keyPath: "mqtt.tls.ca_file",
                value: nil,
                problem: "is missing while other mqtt.tls files are set",
                allowed: "the CA file that signs the broker's certificate "
                    + "(for public CAs: /etc/ssl/certs/ca-certificates.crt)",
                line: lines["mqtt.tls"]
            )
        }
    }

    private mutating func checkReconnectDelays() {
        let mqtt = configuration.mqtt
        guard mqtt.reconnectMinDelay > mqtt.reconnectMaxDelay,
            !refused.contains("mqtt.reconnect_min_delay"), !refused.contains("mqtt.reconnect_max_delay")
        else { return }
        report(
            .conflict,
            keyPath: "mqtt.reconnect_min_delay",
            value: ConfigurationField.formatNumber(mqtt.reconnectMinDelay),
            problem:
                "is greater than mqtt.reconnect_max_delay (\(ConfigurationField.formatNumber(mqtt.reconnectMaxDelay)))",
            allowed: "reconnect_min_delay ≤ reconnect_max_delay",
            line: lines["mqtt.reconnect_min_delay"] ?? lines["mqtt.reconnect_max_delay"]
        )
    }

    /// `mqtt.servers` replaces `mqtt.host`: with both, which one the operator meant is a guess.
    private mutating func checkServers() {
        let mqtt = configuration.mqtt
        guard !mqtt.servers.isEmpty, assigned["mqtt.host"] != nil || variables["mqtt.host"] != nil else { return }
        report(
            .conflict,
            keyPath: "mqtt.host",
            value: mqtt.host,
            problem: "is set together with mqtt.servers (\(mqtt.servers.joined(separator: ", ")))",
            allowed: "one of them: list every broker in mqtt.servers and leave mqtt.host empty (or remove it and "
                + "unset MOTION_AGENT_MQTT_HOST), or set mqtt.host and leave mqtt.servers empty ([])",
            line: lines["mqtt.host"] ?? lines["mqtt.servers"]
        )
    }

    /// A durable message is deleted from disk when the broker acknowledges it; QoS 0 has no acknowledgement.
    mutating func checkDurableStreams() {
        for name in StreamName.allCases {
            let settings = configuration[stream: name]
            let key = "streams.\(name.rawValue)"
            guard settings.durable, settings.qos == 0,
                !refused.contains(key + ".durable"), !refused.contains(key + ".qos")
            else { continue }
            report(
                .conflict,
                keyPath: key + ".durable",
                value: "true",
                problem: "needs QoS 1 or 2, and \(key).qos is 0 (a QoS 0 message is never acknowledged)",
                allowed: "set \(key).qos to 1 or 2, or durable to false",
                line: lines[key + ".durable"] ?? lines[key + ".qos"]
            )
        }
    }

    /// Half a location is a mistake (a line lost in an edit), not a request for a default: refuse it. A
    /// refused or misspelt key of the section (`lat:`) is already reported, and is the likely cause.
    private mutating func checkLocation() {
        guard !refused.contains(where: { $0.hasPrefix("location.") }) else { return }
        let halves: [(given: String, value: Double?, missing: String, other: Double?)] = [
            ("latitude", configuration.location.latitude, "longitude", configuration.location.longitude),
            ("longitude", configuration.location.longitude, "latitude", configuration.location.latitude),
        ]
        for half in halves where half.other == nil {
            guard let value = half.value else { continue }
            report(
                .conflict,
                keyPath: "location." + half.given,
                value: ConfigurationField.formatNumber(value),
                problem: "is set without location.\(half.missing)",
                allowed: "set both location.latitude and location.longitude, or neither"
            )
        }
    }

    /// The keys are read now so that a missing or malformed trust file stops the agent at start, not at the
    /// first command.
    private mutating func checkTrustedKeys() {
        guard let file = configuration.control.trustedKeysFile, !refused.contains("control.trusted_keys_file") else {
            return
        }
        if case .failure(let problem) = FileAccess.trustedKeys(at: file) {
            report(
                problem.kind,
                keyPath: "control.trusted_keys_file",
                value: file,
                problem: problem.problem,
                allowed: ConfigurationSchema.trustedKeysAllowed
            )
        }
    }

    private mutating func checkReadable(_ path: String, keyPath: String) {
        if let problem = FileAccess.checkReadableFile(path) {
            report(
                problem.kind,
                keyPath: keyPath,
                value: path,
                problem: problem.problem,
                allowed: ConfigurationSchema.field(at: keyPath)?.allowed ?? ""
            )
        }
    }
}
