/// One broker address of `mqtt.servers`: `host:port`, `[v6-address]:port`, or a host alone (the default port).
package struct MQTTEndpoint: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// nil when `text` is not an address (`check` says why).
    package init?(parsing text: String, defaultPort: Int) {
        guard case .success(let endpoint) = Self.parse(text, defaultPort: defaultPort) else { return nil }
        self = endpoint
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// A `{host, port}` section of `mqtt.servers`, read as the text `host:port` (`[host]:port` for IPv6, `host`
    /// alone without a port), which `parse` then checks like any other element.
    static var section: ConfigurationField.ElementSection {
        ConfigurationField.ElementSection(keys: ["host", "port"]) { values in
            guard let host = values["host"], !host.isEmpty else {
                return .failure(
                    FieldProblem(kind: .invalidValue, problem: "has no host (write {host: broker-b, port: 8883})")
                )
            }
            if host.hasPrefix("[") || (values["port"] != nil && host.contains("]")) {
                return .failure(
                    FieldProblem(kind: .invalidValue, problem: "has a host in brackets; write the address alone")
                )
            }
            let name = host.contains(":") ? "[\(host)]" : host
            guard let port = values["port"] else { return .success(name) }
            return .success("\(name):\(port)")
        }
    }

    static func parse(_ text: String, defaultPort: Int) -> Result<MQTTEndpoint, FieldProblem> {
        if text.contains("://"), let problem = ConfigurationSchema.checkHost(text) { return .failure(problem) }
        var host = Substring(text)
        var portText: Substring?
        if host.hasPrefix("[") {
            // An IPv6 address in brackets, as in URLs (RFC 3986 §3.2.2).
            guard let close = host.firstIndex(of: "]") else {
                return .failure(FieldProblem(kind: .invalidValue, problem: "opens [ without closing it"))
            }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else {
                    return .failure(FieldProblem(kind: .invalidValue, problem: "has text after ] that is not :port"))
                }
                portText = rest.dropFirst()
            }
        } else if let colon = host.lastIndex(of: ":") {
            if host[..<colon].contains(":") {
                return .failure(
                    FieldProblem(
                        kind: .invalidValue,
                        problem: "is an IPv6 address without brackets; write [address]:port"
                    )
                )
            }
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        if let problem = ConfigurationSchema.checkHost(String(host)) { return .failure(problem) }
        var port = defaultPort
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                return .failure(FieldProblem(kind: .invalidValue, problem: "has the port \"\(portText)\", not 1–65535"))
            }
            port = value
        }
        return .success(MQTTEndpoint(host: String(host), port: port))
    }
}

extension MQTTEndpoint {
    /// Whether the host is this machine's loopback (`localhost`, 127.0.0.0/8, `::1`): traffic to it never
    /// leaves the machine.
    package var isLoopback: Bool {
        let name = host.lowercased()
        if name == "localhost" || name.hasSuffix(".localhost") || name == "ip6-localhost" { return true }
        if name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}

extension MQTTSettings {
    /// The start-up warning for a password that would cross the network in clear — one is given (`hasPassword`:
    /// `mqtt.password_file` or MOTION_AGENT_MQTT_PASSWORD), `mqtt.tls` is off, and a broker is not on this
    /// machine — or nil. Anyone on the path reads the password (MQTT's CONNECT carries it as plain text) and
    /// can then log in as this device.
    package func cleartextPasswordWarning(hasPassword: Bool) -> String? {
        guard hasPassword, tls == nil else { return nil }
        let remote = endpoints.filter { !$0.isLoopback }
        guard !remote.isEmpty else { return nil }
        let names = remote.map(\.description).joined(separator: ", ")
        return
            "the MQTT password goes to \(names) in clear: mqtt.tls is off, so anyone on the network path can read it and log in as this device — set mqtt.tls.ca_file (the CA that signs the broker's certificate; /etc/ssl/certs/ca-certificates.crt for a public one) and the broker's TLS port (8883; Deploy/mosquitto/mosquitto.conf)"
    }
}
