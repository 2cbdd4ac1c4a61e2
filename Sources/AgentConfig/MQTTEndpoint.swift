/// One broker address of `mqtt.servers`: `host:port`, `[v6-address]:port`, or a host alone (the default port).
public struct MQTTEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// nil when `text` is not an address (`check` says why).
    public init?(parsing text: String, defaultPort: Int) {
        guard case .success(let endpoint) = Self.parse(text, defaultPort: defaultPort) else { return nil }
        self = endpoint
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

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
