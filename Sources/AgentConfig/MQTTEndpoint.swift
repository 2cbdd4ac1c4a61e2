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
