import AgentPorts

/// Every key of config.yaml, in the order of the shipped sample: the one place where keys are named,
/// ranges set and values read (`ConfigurationDecoder`) and written back (`effectiveYAML()`). The sample
/// config.yaml documents the same keys in prose; a test decodes it so the two cannot drift.
enum ConfigurationSchema {
    /// A key in a section: either a nested section or a value.
    struct Item {
        enum Entry {
            case section([Item])
            case field(ConfigurationField)
        }

        let key: String
        let entry: Entry

        static func section(_ key: String, _ items: [Item]) -> Item { Item(key: key, entry: .section(items)) }
        static func field(_ key: String, _ field: ConfigurationField) -> Item { Item(key: key, entry: .field(field)) }
    }

    /// The simulator's scenarios (the names `Simulation` accepts).
    static let scenarios = [
        "stationary", "walking", "running", "stairs-up", "stairs-down", "rotating", "cycling", "driving", "mixed-day",
    ]

    /// libiio 0.24's context URI schemes (iio_create_context_from_uri).
    static let iioSchemes = ["local:", "ip:", "usb:", "serial:", "xml:"]

    static let pemFile = "the path of a readable PEM file"

    static let trustedKeysAllowed =
        "the path of a readable file of lines \"<key id> ed25519 <base64 public key>\" (motion-agent keys "
        + "generate prints one), owned by root or the agent's user and not writable by others"

    static let passwordFileAllowed =
        "the path of a readable file whose first line is the password, owned by root or the agent's user, "
        + "readable by no one else (mode 600, or 640 with the agent's group)"

    /// Keys earlier versions had, and what replaces them: an old config.yaml is refused with the way forward.
    static let removedKeys: [String: (problem: String, fix: String)] = [
        "control.hmac_key_file": (
            "was removed: one shared HMAC key on every device let any device that was compromised sign commands "
                + "and desired documents the whole fleet accepted",
            "operators sign with Ed25519 keys the devices only verify: run motion-agent keys generate --output "
                + "operator.key on the operator's machine, put the line it prints into a file named by "
                + "control.trusted_keys_file on each device, sign with motion-agent ctl --signing-key operator.key and "
                + "motion-agent fleet set --signing-key operator.key, and remove control.hmac_key_file (docs/security.md)"
        )
    ]

    /// `mqtt.servers`: `host:port` texts or `{host, port}` sections, read as the same text.
    static var serversField: ConfigurationField {
        var field = ConfigurationField.textList(
            \.mqtt.servers,
            allowed: "a list of distinct broker addresses, each host:port ([address]:port for IPv6; a host alone "
                + "takes mqtt.port) or a {host, port} section, e.g. [broker-a:1883, {host: broker-b, port: 8883}]; "
                + "empty for mqtt.host alone",
            check: { text in
                if case .failure(let problem) = MQTTEndpoint.parse(text, defaultPort: 1883) { return problem }
                return nil
            }
        )
        field.elementSection = MQTTEndpoint.section
        return field
    }

    /// Built once: a document's decoding and every status walk the schema, and building its few hundred closures
    /// for each walk was a tenth of the fault explorer's time. Immutable after it is built, and its closures
    /// capture only key paths and constants.
    static var root: [Item] { rootItems }

    nonisolated(unsafe) private static let rootItems: [Item] = makeRoot()

    private static func makeRoot() -> [Item] {
        [
            .section(
                "device",
                [
                    .field(
                        "id",
                        .text(
                            \.device.id,
                            allowed: "1–64 characters without / + # { }; leave empty for the host name",
                            check: TopicTemplate.checkDeviceID
                        )
                    )
                ]
            ),
            .section(
                "location",
                [
                    .field(
                        "latitude",
                        .optionalNumber(
                            \.location.latitude,
                            allowed: "a number from -90 to 90 (degrees north); leave empty for no location"
                        ) {
                            abs($0) <= 90
                        }
                    ),
                    .field(
                        "longitude",
                        .optionalNumber(
                            \.location.longitude,
                            allowed: "a number from -180 to 180 (degrees east); leave empty for no location"
                        ) {
                            abs($0) <= 180
                        }
                    ),
                    // Where devices are installed: from the Dead Sea shore (about -430 m) with margin to
                    // high mountain stations; WMM2025 itself holds from -1 km to 850 km.
                    .field(
                        "altitude_m",
                        .number(
                            \.location.altitudeM,
                            allowed: "a number from -1000 to 10000 (metres above the WGS 84 ellipsoid)"
                        ) {
                            $0 >= -1000 && $0 <= 10000
                        }
                    ),
                ]
            ),
            .section(
                "agent",
                [
                    .field(
                        "state_dir",
                        .path(
                            \.agent.stateDir,
                            allowed: "a directory path; leave empty for /var/lib/motion-agent when writable, "
                                + "else ./.motion-agent"
                        )
                    ),
                    .field("log_level", .choice(\.agent.logLevel)),
                ]
            ),
            .section(
                "source",
                [
                    .field("kind", .choice(\.source.kind)),
                    .section(
                        "simulated",
                        [
                            .field("scenario", .word(\.source.simulated.scenario, among: scenarios)),
                            .field("seed", .unsigned(\.source.simulated.seed)),
                            .field(
                                "rate_hz",
                                .number(\.source.simulated.rateHz, allowed: "a number ≥ 1 and ≤ 4000 (Hz)") {
                                    $0 >= 1 && $0 <= 4000
                                }
                            ),
                            .field(
                                "latitude",
                                .number(\.source.simulated.latitude, allowed: "a number from -90 to 90 (degrees north)")
                                {
                                    abs($0) <= 90
                                }
                            ),
                            .field(
                                "longitude",
                                .number(
                                    \.source.simulated.longitude,
                                    allowed: "a number from -180 to 180 (degrees east)"
                                ) {
                                    abs($0) <= 180
                                }
                            ),
                            // WMM2025 is valid from 1 km below to 850 km above the WGS 84 ellipsoid (NOAA/BGS WMM
                            // 2025 technical report, §1).
                            .field(
                                "altitude_m",
                                .number(
                                    \.source.simulated.altitudeM,
                                    allowed: "a number from -1000 to 850000 (metres above the WGS 84 ellipsoid)"
                                ) {
                                    $0 >= -1000 && $0 <= 850_000
                                }
                            ),
                        ]
                    ),
                    iioSection,
                    .section(
                        "replay",
                        [
                            .field(
                                "file",
                                .path(
                                    \.source.replay.file,
                                    allowed: "the path of a recording in the record/replay CSV format"
                                )
                            ),
                            .field("speed", .choice(\.source.replay.speed)),
                            .field("loop", .flag(\.source.replay.loop)),
                        ]
                    ),
                ]
            ),
            .section(
                "mqtt",
                [
                    .field(
                        "host",
                        .text(
                            \.mqtt.host,
                            allowed: "a host name or IP address, without scheme or port",
                            check: checkHost
                        )
                    ),
                    .field("port", .integer(\.mqtt.port, range: 1...65535)),
                    .field(
                        "client_id",
                        .text(
                            \.mqtt.clientID,
                            allowed: "text up to 65535 bytes; {device} is replaced by device.id",
                            check: TopicTemplate.checkClientID
                        )
                    ),
                    .field("protocol", .choice(\.mqtt.protocolVersion)),
                    // libmosquitto refuses keepalive < 5 s (mosquitto_connect: MOSQ_ERR_INVAL); MQTT's field
                    // is 16 bits.
                    .field("keepalive", .integer(\.mqtt.keepalive, range: 5...65535, unit: "seconds")),
                    .field("clean_session", .flag(\.mqtt.cleanSession)),
                    .field("username", .optionalText(\.mqtt.username, allowed: "text; leave empty for none")),
                    .field(
                        "password_file",
                        .path(\.mqtt.passwordFile, allowed: passwordFileAllowed)
                    ),
                    .section(
                        "tls",
                        [
                            .field(
                                "ca_file",
                                .path(
                                    \.mqtt.tlsCAFile,
                                    allowed: pemFile + " of the CA certificates that sign the broker's certificate"
                                )
                            ),
                            .field(
                                "cert_file",
                                .path(\.mqtt.tlsCertFile, allowed: pemFile + " holding the client certificate")
                            ),
                            .field(
                                "key_file",
                                .path(
                                    \.mqtt.tlsKeyFile,
                                    allowed: pemFile
                                        + " holding the client certificate's private key, owned by root or the agent's user, readable by no one else (mode 600, or 640 with the agent's group)"
                                )
                            ),
                        ]
                    ),
                    .field(
                        "reconnect_min_delay",
                        .number(\.mqtt.reconnectMinDelay, allowed: "a number > 0 and ≤ 3600 (seconds)") {
                            $0 > 0 && $0 <= 3600
                        }
                    ),
                    .field(
                        "reconnect_max_delay",
                        .number(\.mqtt.reconnectMaxDelay, allowed: "a number > 0 and ≤ 3600 (seconds)") {
                            $0 > 0 && $0 <= 3600
                        }
                    ),
                    .field("reconnect_jitter", .choice(\.mqtt.reconnectJitter)),
                    .field("max_inflight", .integer(\.mqtt.maxInflight, range: 1...65535, unit: "messages")),
                    .field("servers", serversField),
                    // MQTT 5 §3.1.2.11.2: a four-byte interval; 0xFFFFFFFF is "never", which 0 stands for here.
                    .field(
                        "session_expiry_s",
                        .integer(
                            \.mqtt.sessionExpirySeconds,
                            range: 0...4_294_967_294,
                            unit: "seconds; 0: the session never expires"
                        )
                    ),
                ]
            ),
            .section(
                "topics",
                [
                    .field(
                        "root",
                        .text(
                            \.topics.root,
                            allowed: "topic levels joined by /, without + # or empty levels, not starting with $; "
                                + "{device} is replaced by device.id",
                            check: TopicTemplate.checkRoot
                        )
                    )
                ]
            ),
            .section(
                "control",
                [
                    .field(
                        "fleet_topic",
                        .text(
                            \.control.fleetTopic,
                            allowed: "topic levels joined by /, without + # or empty levels, not starting with $, "
                                + "without {device}",
                            check: TopicTemplate.checkFleetTopic
                        )
                    ),
                    .field(
                        "fleet_desired_topic",
                        .text(
                            \.control.fleetDesiredTopic,
                            allowed: "topic levels joined by /, without + # or empty levels, not starting with $, "
                                + "without {device}",
                            check: TopicTemplate.checkFleetTopic
                        )
                    ),
                    .field(
                        "groups",
                        .textList(
                            \.control.groups,
                            allowed: "a list of distinct group names, each 1–64 characters without / + # "
                                + "(e.g. [line-2, calibration-rig])",
                            check: TopicTemplate.checkLevel
                        )
                    ),
                    .field("persist", .flag(\.control.persist)),
                    .field("max_age_s", .integer(\.control.maxAgeSeconds, range: 0...86400, unit: "seconds; 0: off")),
                    .field(
                        "rate_limit_per_s",
                        .number(\.control.rateLimitPerSecond, allowed: "a number > 0 and ≤ 1000 (commands per second)")
                        {
                            $0 > 0 && $0 <= 1000
                        }
                    ),
                    .field("rate_limit_burst", .integer(\.control.rateLimitBurst, range: 1...10000, unit: "commands")),
                    .field("trusted_keys_file", .path(\.control.trustedKeysFile, allowed: trustedKeysAllowed)),
                    // MQTT allows 256 MB payloads; commands are small JSON objects, and the limit bounds
                    // what one message can make the agent parse.
                    .field(
                        "max_payload_bytes",
                        .integer(\.control.maxPayloadBytes, range: 256...65536, unit: "bytes")
                    ),
                ]
            ),
            .section(
                "outbox",
                [
                    .field("max_bytes", .integer(\.outbox.maxBytes, range: 65536...1_073_741_824, unit: "bytes")),
                    .field("max_age_s", .integer(\.outbox.maxAgeSeconds, range: 1...604800, unit: "seconds")),
                    .field(
                        "replay_rate",
                        .integer(\.outbox.replayRate, range: 1...100_000, unit: "messages per second")
                    ),
                ]
            ),
            .section("streams", StreamDescriptor.table.map(streamSection)),
            .section(
                "pedometer",
                [
                    .field(
                        "user_height_m",
                        .number(\.pedometer.userHeightM, allowed: "a number from 0.5 to 2.5 (metres)") {
                            $0 >= 0.5 && $0 <= 2.5
                        }
                    ),
                    .field(
                        "history_retention_days",
                        .integer(\.pedometer.historyRetentionDays, range: 1...365, unit: "days")
                    ),
                ]
            ),
            .section(
                "altimeter",
                [
                    // The lowest sea-level pressure measured is 87.0 kPa (Typhoon Tip, 1979), the highest
                    // 108.4 kPa (Agata, Siberia, 1968): the range covers both with margin.
                    .field(
                        "sea_level_pressure_kpa",
                        .number(\.altimeter.seaLevelPressureKPa, allowed: "a number from 80 to 110 (kPa)") {
                            $0 >= 80 && $0 <= 110
                        }
                    )
                ]
            ),
            .section(
                "submersion",
                [
                    .field("water", .choice(\.submersion.water)),
                    .field(
                        "max_depth_m",
                        .number(\.submersion.maxDepthM, allowed: "a number from 1 to 1000 (metres)") {
                            $0 >= 1 && $0 <= 1000
                        }
                    ),
                ]
            ),
            .section(
                "metrics",
                [
                    .field("interval_s", .integer(\.metrics.intervalS, range: 0...3600, unit: "seconds; 0: off")),
                    .field(
                        "prometheus_file",
                        .path(
                            \.metrics.prometheusFile,
                            allowed: "a file path in a writable directory (e.g. "
                                + "/var/lib/node_exporter/textfile_collector/motion-agent.prom); leave empty for none"
                        )
                    ),
                ]
            ),
            .section(
                "home_assistant",
                [
                    .field("enabled", .flag(\.homeAssistant.enabled)),
                    .field(
                        "discovery_prefix",
                        .text(
                            \.homeAssistant.discoveryPrefix,
                            allowed: "topic levels joined by /, without + # or empty levels, not starting with $ "
                                + "(Home Assistant's discovery_prefix)",
                            check: TopicTemplate.checkFleetTopic
                        )
                    ),
                ]
            ),
            .section(
                "sparkplug",
                [
                    .field("enabled", .flag(\.sparkplug.enabled)),
                    .field(
                        "group_id",
                        .text(
                            \.sparkplug.groupID,
                            allowed: sparkplugIdentifierAllowed,
                            check: SparkplugSettings.identifierProblem
                        )
                    ),
                    .field("primary_host_id", sparkplugPrimaryHost),
                    .field(
                        "streams",
                        .textList(
                            \.sparkplug.streams,
                            allowed: "a list of stream names: \(SparkplugSettings.streamNames.joined(separator: ", "))"
                        ) { name in
                            SparkplugSettings.streamNames.contains(name)
                                ? nil : .notAChoice(name, among: SparkplugSettings.streamNames)
                        }
                    ),
                    .field("writes", .flag(\.sparkplug.writes)),
                    .field(
                        "username",
                        .optionalText(\.sparkplug.username, allowed: "text; leave empty for mqtt.username")
                    ),
                    .field(
                        "password_file",
                        .path(
                            \.sparkplug.passwordFile,
                            allowed: "the path of a readable file whose first line is the password; empty for "
                                + "mqtt's password"
                        )
                    ),
                ]
            ),
        ]
    }

    static let sparkplugIdentifierAllowed =
        "a Sparkplug id: not empty, without + / # or control characters, at most 256 bytes"

    /// `sparkplug.primary_host_id`: empty for none, else a Sparkplug id.
    static var sparkplugPrimaryHost: ConfigurationField {
        ConfigurationField(
            allowed: sparkplugIdentifierAllowed + "; empty for no primary host",
            decode: { text, _, configuration in
                if text.isEmpty {
                    configuration.sparkplug.primaryHostID = nil
                    return nil
                }
                if let problem = SparkplugSettings.identifierProblem(text) { return problem }
                configuration.sparkplug.primaryHostID = text
                return nil
            },
            render: { $0.sparkplug.primaryHostID.map(RenderedScalar.text) ?? .null }
        )
    }

    /// `streams.<name>`: the keys its descriptor lists (`StreamDescriptor.settingKeys`), in that order.
    static func streamSection(_ descriptor: StreamDescriptor) -> Item {
        .section(
            descriptor.name.rawValue,
            descriptor.settingKeys.map { key in
                guard let field = streamField(key, descriptor.name) else {
                    // A key a descriptor names must have a field here: StreamDescriptorTests checks every one.
                    preconditionFailure("streams.\(descriptor.name.rawValue).\(key) has no field in the config schema")
                }
                return .field(key, field)
            }
        )
    }

    /// The field of one key of `streams.<name>`; nil for a key no stream has.
    static func streamField(_ key: String, _ name: StreamName) -> ConfigurationField? {
        switch key {
        case "enabled": .flag(\.[stream: name].enabled)
        case "rate_hz":
            .number(\.[stream: name].rateHz, allowed: "a number > 0 and ≤ 1000 (Hz)") { $0 > 0 && $0 <= 1000 }
        case "qos": .integer(\.[stream: name].qos, range: 0...2)
        case "retain": .flag(\.[stream: name].retain)
        case "durable": .flag(\.[stream: name].durable)
        case "expiry_s":
            .optionalInteger(
                \.[stream: name].expirySeconds,
                range: 1...StreamSettings.maximumExpirySeconds,
                unit: "seconds, the MQTT 5 Message Expiry Interval",
                none: "messages that never expire"
            )
        case "batch": .integer(\.[stream: name].batch, range: 1...1000, unit: "samples")
        case "encoding": .choice(\.[stream: name].encoding)
        // Device motion's own: they live outside the stream's settings, in `deviceMotion`.
        case "reference_frame": .choice(\.deviceMotion.referenceFrame)
        case "reference_attitude": .referenceAttitude(\.deviceMotion.referenceAttitude)
        // The events stream's own, in `events`.
        case "falls": .flag(\.events.falls)
        case "impacts": .flag(\.events.impacts)
        case "free_falls": .flag(\.events.freeFalls)
        case "tilt": .flag(\.events.tilt)
        case "impact_threshold_g":
            .number(\.events.impactThresholdG, allowed: "a number from 1.5 to 16 (g)") {
                MotionEventsSettings.impactThresholdRange.contains($0)
            }
        case "fall_response_s":
            .number(\.events.fallResponseSeconds, allowed: "a number from 10 to 600 (seconds)") {
                MotionEventsSettings.fallResponseRange.contains($0)
            }
        case "tilt_cone_degrees":
            .number(\.events.tiltConeDegrees, allowed: "a number from 5 to 85 (degrees)") {
                MotionEventsSettings.tiltConeRange.contains($0)
            }
        default: nil
        }
    }

    /// An IIO device id or driver name: sysfs names hold no spaces, slashes or `=`.
    static func checkIIODevice(_ name: String) -> FieldProblem? {
        if name.isEmpty { return FieldProblem(kind: .invalidValue, problem: "is empty") }
        if name.contains(where: { $0.isWhitespace || $0 == "/" || $0 == "=" }) {
            return FieldProblem(
                kind: .invalidValue,
                problem: "contains a space, / or =, which no IIO device id or driver name has"
            )
        }
        return nil
    }

    /// `source.iio`, apart so the type checker takes `root` in reasonable time.
    static var iioSection: Item {
        .section(
            "iio",
            [
                .field(
                    "uri",
                    .text(
                        \.source.iio.uri,
                        allowed: "a libiio context URI: " + iioSchemes.joined(separator: ", ")
                            + " (e.g. ip:192.168.1.20)"
                    ) { uri in
                        iioSchemes.contains(where: uri.hasPrefix)
                            ? nil
                            : FieldProblem(
                                kind: .invalidValue,
                                problem: "is not a libiio context URI",
                                suggestion: EditDistance.closest(to: uri, among: iioSchemes)
                            )
                    }
                ),
                .field(
                    "devices",
                    .textList(
                        \.source.iio.devices,
                        allowed: "a list of distinct IIO device ids or driver names "
                            + "(e.g. [iio:device0, ak8975]); empty for every device found",
                        check: checkIIODevice
                    )
                ),
                .field("mount_matrix", .mountMatrixList(\.source.iio.mountMatrix)),
            ]
        )
    }

    static func checkHost(_ host: String) -> FieldProblem? {
        if host.isEmpty { return FieldProblem(kind: .invalidValue, problem: "is empty") }
        if host.contains("://") {
            return FieldProblem(
                kind: .invalidValue,
                problem: "has a URL scheme; give the host alone (the port is mqtt.port)"
            )
        }
        if host.contains(where: { $0.isWhitespace || $0 == "/" }) {
            return FieldProblem(kind: .invalidValue, problem: "contains a space or a /")
        }
        return nil
    }

    /// The field at a dotted key path (`mqtt.port`), for environment overrides and the runtime layers.
    static func field(at keyPath: String) -> ConfigurationField? {
        var items = root
        let keys = keyPath.split(separator: ".").map(String.init)
        for (index, key) in keys.enumerated() {
            guard let item = items.first(where: { $0.key == key }) else { return nil }
            switch item.entry {
            case .section(let children): items = children
            case .field(let field): return index == keys.count - 1 ? field : nil
            }
        }
        return nil
    }

    /// Every key path whose last key is `key`, for suggesting a key written in the wrong section.
    static func keyPaths(endingWith key: String) -> [String] {
        var found: [String] = []
        func visit(_ items: [Item], prefix: String) {
            for item in items {
                let path = prefix.isEmpty ? item.key : prefix + "." + item.key
                if item.key == key { found.append(path) }
                if case .section(let children) = item.entry { visit(children, prefix: path) }
            }
        }
        visit(root, prefix: "")
        return found
    }
}

// Writable views that let the schema address the optional TLS section and the stream dictionary by key path.
extension MQTTSettings {
    var tlsCAFile: String? {
        get { tls?.caFile }
        set { updateTLS { $0.caFile = newValue } }
    }

    var tlsCertFile: String? {
        get { tls?.certFile }
        set { updateTLS { $0.certFile = newValue } }
    }

    var tlsKeyFile: String? {
        get { tls?.keyFile }
        set { updateTLS { $0.keyFile = newValue } }
    }

    /// TLS is on when any of its files is set; with none the section means "no TLS" (`tls == nil`).
    private mutating func updateTLS(_ change: (inout TLSSettings) -> Void) {
        var settings = tls ?? TLSSettings()
        change(&settings)
        tls = settings.caFile == nil && settings.certFile == nil && settings.keyFile == nil ? nil : settings
    }
}

extension AgentConfiguration {
    /// One stream's settings: as configured, else its descriptor's defaults.
    package subscript(stream name: StreamName) -> StreamSettings {
        get { streams[name] ?? name.descriptor.defaults }
        set { streams[name] = newValue }
    }
}
