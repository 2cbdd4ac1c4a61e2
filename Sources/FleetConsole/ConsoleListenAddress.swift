/// Where the console listens (`--listen HOST:PORT`): an IPv4 or IPv6 literal (`[::1]:8080`) and a port.
package struct ConsoleListenAddress: Sendable, Equatable {
    package var host: String
    package var port: UInt16

    package init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `127.0.0.1:8080`, `0.0.0.0:8080`, `[::1]:8080`, `[::]:8080`; nil when it is not one.
    package init?(parsing text: String) {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard !host.contains(":") else { return nil }
        }
        guard !host.isEmpty, let port = UInt16(portText) else { return nil }
        let isIPv4 =
            host.split(separator: ".", omittingEmptySubsequences: false).count == 4
            && host.split(separator: ".").allSatisfy { UInt8($0) != nil }
        let isIPv6 = host.contains(":") && host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        guard isIPv4 || isIPv6 else { return nil }
        self.host = String(host)
        self.port = port
    }

    /// Whether only this machine can reach it: 127.0.0.0/8 or ::1.
    package var isLoopback: Bool {
        host.hasPrefix("127.") || host == "::1"
    }

    /// Whether it listens on every address (0.0.0.0, ::).
    package var isWildcard: Bool { host == "0.0.0.0" || host == "::" }

    /// `host:port` as a URL writes it.
    package var authority: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The `Host` values a browser sends for this address: the literal, loopback's names on loopback, and any
    /// names the operator gives (`--host-name`, for a wildcard or a name in DNS).
    package func hostHeaders(names: [String]) -> Set<String> {
        var hosts: Set<String> = [authority.lowercased()]
        if isLoopback {
            hosts.formUnion(["localhost:\(port)", "127.0.0.1:\(port)", "[::1]:\(port)"])
        }
        for name in names { hosts.insert(name.contains(":") && !name.hasPrefix("[") ? name : "\(name):\(port)") }
        return Set(hosts.map { $0.lowercased() })
    }
}
